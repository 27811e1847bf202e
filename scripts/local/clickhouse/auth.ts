import { createHash, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import { ClickHouseHttpError } from "./errors.js";
import { singleHeader } from "./request.js";

/** The one user the server accepts (server.ts ClickHouseHttpOptions). */
export type HttpUser = { user: string; password: string };

export function authenticate(req: http.IncomingMessage, url: URL, opts: HttpUser): void {
  const given = presentedCredentials(req, url);
  if (!sameSecret(given.user, opts.user) || !sameSecret(given.password, opts.password)) {
    throw new ClickHouseHttpError(
      401,
      516,
      "AUTHENTICATION_FAILED",
      `${given.user}: Authentication failed: password is incorrect, or there is no user with such name`,
    );
  }
}

function presentedCredentials(req: http.IncomingMessage, url: URL): { user: string; password: string } {
  const authorization = req.headers.authorization ?? "";
  if (authorization.startsWith("Basic ")) {
    const decoded = Buffer.from(authorization.slice(6), "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon < 0
      ? { user: decoded, password: "" }
      : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  const headerUser = singleHeader(req, "x-clickhouse-user");
  if (headerUser !== undefined) {
    return { user: headerUser, password: singleHeader(req, "x-clickhouse-key") ?? "" };
  }
  const urlUser = url.searchParams.get("user");
  if (urlUser !== null) {
    return { user: urlUser, password: url.searchParams.get("password") ?? "" };
  }
  return { user: "default", password: "" };
}

// Hashing first makes the comparison constant-time regardless of length.
function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}
