const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Why a channel URL is refused, or null when it is acceptable. Deliveries carry alert details, so they
 * must travel over https; plain http is allowed only to loopback, for local development and tests
 * (a deployed Worker cannot reach a loopback address, so this opens nothing in production).
 */
export function channelUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  if (url.username || url.password) {
    return "must not carry credentials";
  }
  if (url.protocol === "https:") {
    return null;
  }
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) {
    return null;
  }
  return "must use https (plain http only to a loopback host)";
}
