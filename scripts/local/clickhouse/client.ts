import http from "node:http";
import https from "node:https";

/**
 * POSTs one statement to a ClickHouse HTTP endpoint and returns the response
 * body. `params` fill `{name:Type}` placeholders and must already be in
 * ClickHouse's escaped text form (plain values without \, tab or newline are).
 * Over node:http(s), not `fetch`: fetch gives up on a response whose headers take more than 300 s, and
 * a migration that refills a rollup from the events (0034_compare_bitmaps.sql) answers only when it
 * has read them all, minutes at a studio's volume.
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
  const { status, exception, text } = await new Promise<{ status: number; exception: boolean; text: string }>(
    (resolve, reject) => {
      const req = (target.protocol === "https:" ? https : http).request(
        target,
        {
          method: "POST",
          headers: {
            Authorization: `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString("base64")}`,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", reject);
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 500,
              exception: res.headers["x-clickhouse-exception-code"] !== undefined,
              text: Buffer.concat(chunks).toString("utf8"),
            }),
          );
        },
      );
      req.on("error", reject);
      req.end(sql);
    },
  );
  if (status < 200 || status >= 300 || exception) {
    throw new Error(text.trim() || `ClickHouse HTTP ${status}`);
  }
  return text;
}
