import { eq } from "drizzle-orm";
import { oauthClients } from "../../../../schema/pg/schema.js";
import type { Db } from "../../db.js";
import { AccountError } from "../users.js";

export type OAuthClient = { id: string; name: string; redirectUris: string[] };

export async function findClient(db: Db, clientId: string | undefined): Promise<OAuthClient | null> {
  if (!clientId || clientId.length > 128) {
    return null;
  }
  const [row] = await db
    .select({ id: oauthClients.id, name: oauthClients.name, redirectUris: oauthClients.redirectUris })
    .from(oauthClients)
    .where(eq(oauthClients.id, clientId))
    .limit(1);
  return row ?? null;
}

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]"]);

function parse(uri: string): URL | null {
  try {
    return new URL(uri);
  } catch {
    return null;
  }
}

/**
 * Whether `requested` is one of the client's redirect URIs. Exact string match, except that an http
 * loopback IP literal matches on any port (RFC 8252 section 7.3: native apps bind an ephemeral port).
 */
export function redirectUriAllowed(client: OAuthClient, requested: string | undefined): boolean {
  if (!requested || requested.length > 2000) {
    return false;
  }
  if (client.redirectUris.includes(requested)) {
    return true;
  }
  const req = parse(requested);
  if (req?.protocol !== "http:" || !LOOPBACK_HOSTS.has(req.hostname) || req.hash || req.username) {
    return false;
  }
  return client.redirectUris.some((registered) => {
    const reg = parse(registered);
    return (
      reg !== null &&
      reg.protocol === "http:" &&
      reg.hostname === req.hostname &&
      reg.pathname === req.pathname &&
      reg.search === req.search
    );
  });
}

/** Why a redirect URI cannot be registered, or null: https, http on a loopback IP, or a private scheme. */
export function redirectUriProblem(uri: string): string | null {
  const u = parse(uri);
  if (!u) {
    return "is not an absolute URI";
  }
  if (u.hash || uri.includes("#")) {
    return "must not have a fragment";
  }
  if (u.protocol === "https:") {
    return null;
  }
  if (u.protocol === "http:") {
    return LOOPBACK_HOSTS.has(u.hostname) ? null : "may use http only on 127.0.0.1 or [::1]";
  }
  // RFC 8252 section 7.1: private-use schemes are reverse domain names.
  return /^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+:$/.test(u.protocol) ? null : "has an unsupported scheme";
}

/** Registers a public client (no secret: PKCE is its proof). */
export async function registerClient(
  db: Db,
  input: { id?: string; name: string; redirectUris: string[] },
): Promise<OAuthClient> {
  const name = input.name.trim();
  if (!name || name.length > 100) {
    throw new AccountError("name must be 1 to 100 characters");
  }
  if (!input.redirectUris.length) {
    throw new AccountError("at least one redirect URI is needed");
  }
  for (const uri of input.redirectUris) {
    const problem = redirectUriProblem(uri);
    if (problem) {
      throw new AccountError(`redirect URI ${uri} ${problem}`);
    }
  }
  const id = input.id ?? `fdc_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
  if (!/^[A-Za-z0-9_.-]{3,128}$/.test(id)) {
    throw new AccountError("id must be 3 to 128 letters, digits, '_', '.' or '-'");
  }
  const [row] = await db
    .insert(oauthClients)
    .values({ id, name, redirectUris: input.redirectUris })
    .onConflictDoNothing()
    .returning({ id: oauthClients.id, name: oauthClients.name, redirectUris: oauthClients.redirectUris });
  if (!row) {
    throw new AccountError(`a client with the id ${id} already exists`);
  }
  return row;
}
