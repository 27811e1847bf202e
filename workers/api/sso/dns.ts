import { ApiError } from "../../shared/errors.js";

// TXT lookups through a DNS-over-HTTPS resolver's JSON API (as Cloudflare's and Google's public
// resolvers serve it): `GET <resolver>?name=<name>&type=TXT` with `accept: application/dns-json`,
// answered `{"Status":0,"Answer":[{"name":…,"type":16,"data":"\"…\""}]}`. The resolver is the
// Worker's SSO_DNS_RESOLVER (wrangler.toml; a loopback server in tests).

/** Each lookup is bounded: a resolver that hangs is a down resolver. */
const DNS_TIMEOUT_MS = 5000;
const TXT = 16;
/** DNS RCODEs: NOERROR, NXDOMAIN (the name does not exist: no record, not a failure). */
const NOERROR = 0;
const NXDOMAIN = 3;

/**
 * A TXT record's text: its character-strings as the JSON API writes them (each quoted, `\"` and `\\`
 * escaped, a long record split into several strings), joined as RFC 7208 3.3 joins them.
 */
export function txtText(data: string): string {
  const strings = [...data.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) =>
    (m[1] ?? "").replace(/\\(\d{3}|.)/g, (_all, esc: string) =>
      /^\d{3}$/.test(esc) ? String.fromCharCode(Number(esc)) : esc,
    ),
  );
  return strings.length > 0 ? strings.join("") : data;
}

function unavailable(resolver: string, why: string): ApiError {
  return new ApiError(
    "UNAVAILABLE",
    `The DNS resolver (${new URL(resolver).host}) could not be asked for the TXT record (${why}). Nothing changed; try again in a minute.`,
    { retryAfter: 30 },
  );
}

/** The TXT records at `name` (empty when there are none or the name does not exist); a 503 when the resolver fails. */
export async function txtRecords(resolver: string, name: string): Promise<string[]> {
  const url = new URL(resolver);
  url.searchParams.set("name", name);
  url.searchParams.set("type", "TXT");
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { accept: "application/dns-json" },
      signal: AbortSignal.timeout(DNS_TIMEOUT_MS),
    });
  } catch (err) {
    throw unavailable(resolver, err instanceof Error ? err.name : "no answer");
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw unavailable(resolver, `HTTP ${response.status}`);
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw unavailable(resolver, "its answer is not DNS JSON");
  }
  const status = body && typeof body === "object" && "Status" in body ? body.Status : undefined;
  if (status === NXDOMAIN) {
    return [];
  }
  if (status !== NOERROR) {
    // SERVFAIL and the like: the resolver could not answer, which says nothing about the record.
    throw unavailable(resolver, `DNS status ${String(status)}`);
  }
  const answer = "Answer" in (body as object) ? (body as { Answer: unknown }).Answer : [];
  if (!Array.isArray(answer)) {
    return [];
  }
  return answer
    .filter(
      (a): a is { type: number; data: string } =>
        Boolean(a) && typeof a === "object" && a.type === TXT && typeof a.data === "string",
    )
    .map((a) => txtText(a.data));
}
