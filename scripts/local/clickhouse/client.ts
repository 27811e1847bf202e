/**
 * POSTs one statement to a ClickHouse HTTP endpoint and returns the response
 * body. `params` fill `{name:Type}` placeholders and must already be in
 * ClickHouse's escaped text form (plain values without \, tab or newline are).
 */
export async function clickhouseQuery(
  url: string,
  auth: { user: string; password: string },
  sql: string,
  params: Record<string, string> = {},
): Promise<string> {
  const target = new URL(url);
  for (const [name, value] of Object.entries(params)) {
    target.searchParams.set(`param_${name}`, value);
  }
  const response = await fetch(target, {
    method: "POST",
    body: sql,
    headers: { Authorization: `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString("base64")}` },
  });
  const text = await response.text();
  if (!response.ok || response.headers.has("x-clickhouse-exception-code")) {
    throw new Error(text.trim() || `ClickHouse HTTP ${response.status}`);
  }
  return text;
}
