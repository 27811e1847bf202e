import { and, eq, isNotNull } from "drizzle-orm";
import {
  type MembershipRole,
  type SsoConnectionRow,
  ssoConnections,
  ssoDomainProofs,
  ssoDomains,
} from "../../../schema/pg/schema.js";
import { ApiError } from "../../shared/errors.js";
import type { Db, Tx } from "../db.js";
import { domainsProvenElsewhere, ensureProofs, unverifyAll } from "./domains.js";
import { discover, isLoopbackHost } from "./provider.js";
import { sealSecret } from "./secret.js";

// A studio's OpenID Connect configuration (docs/accounts.md, "Single sign-on"). What an owner submits
// becomes the studio's `pending` connection; only a successful test sign-in with it (flow.ts) makes it
// the `active` one that sign-in uses, and claims its email domains.

export type SsoInput = {
  issuer: string;
  clientId: string;
  /** Empty or absent: keep the stored secret (the pending one, else the active one). */
  clientSecret?: string;
  domains: string[];
  defaultRole: MembershipRole;
};

/** What may be shown of a connection: everything but the secret. */
export type SsoConnectionView = {
  id: string;
  issuer: string;
  clientId: string;
  clientSecretSet: true;
  domains: string[];
  defaultRole: MembershipRole;
  requireSso: boolean;
  testedAt: string | null;
  testedAs: string | null;
  updatedAt: string;
};

export const MAX_DOMAINS = 20;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/;

/**
 * Mail providers anyone can get an address at: their domains belong to no studio, so a studio cannot
 * send everyone with such an address to its own provider.
 */
const PUBLIC_MAIL_DOMAINS = new Set([
  "gmail.com",
  "googlemail.com",
  "outlook.com",
  "hotmail.com",
  "live.com",
  "msn.com",
  "yahoo.com",
  "icloud.com",
  "me.com",
  "aol.com",
  "proton.me",
  "protonmail.com",
  "gmx.com",
  "gmx.de",
  "mail.com",
  "yandex.com",
  "qq.com",
  "163.com",
]);

function bad(field: string, rule: string): ApiError {
  return new ApiError("BAD_REQUEST", `${field}: ${rule}`, { extensions: { field } });
}

/** The domains as typed (comma, space or newline separated), trimmed and lower-cased. */
export function parseDomains(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((d) => d.trim().toLowerCase().replace(/^@/, ""))
    .filter((d) => d.length > 0);
}

/** An https issuer URL, or http on a loopback host (local development and tests). */
export function issuerAllowed(url: URL): boolean {
  return url.protocol === "https:" || (url.protocol === "http:" && isLoopbackHost(url.hostname));
}

/** The input, checked and normalized; throws a 400 naming the field and the rule. */
export function checkSsoInput(input: SsoInput): SsoInput {
  const issuerText = input.issuer.trim();
  let issuer: URL;
  try {
    issuer = new URL(issuerText);
  } catch {
    throw bad("issuer", "must be the provider's issuer URL, e.g. https://accounts.google.com");
  }
  if (!issuerAllowed(issuer) || issuer.search || issuer.hash || issuer.username || issuerText.length > 500) {
    throw bad("issuer", "must be an https URL without query or fragment (http only on a loopback host)");
  }
  const clientId = input.clientId.trim();
  if (!clientId || clientId.length > 255 || /[\s\p{Cc}]/u.test(clientId)) {
    throw bad("clientId", "must be 1 to 255 characters without spaces");
  }
  const clientSecret = input.clientSecret ?? "";
  if (clientSecret.length > 1024 || /\p{Cc}/u.test(clientSecret)) {
    throw bad("clientSecret", "must be at most 1024 characters without control characters");
  }
  const domains = [...new Set(input.domains.map((d) => d.trim().toLowerCase()))];
  if (domains.length === 0) {
    throw bad("domains", "name at least one email domain the studio owns, e.g. studio.com");
  }
  if (domains.length > MAX_DOMAINS) {
    throw bad("domains", `at most ${MAX_DOMAINS} domains`);
  }
  for (const domain of domains) {
    if (!DOMAIN.test(domain)) {
      throw bad("domains", `${domain} is not a domain name (e.g. studio.com)`);
    }
    if (PUBLIC_MAIL_DOMAINS.has(domain)) {
      throw bad("domains", `${domain} is a public mail provider's domain, which no studio owns`);
    }
  }
  return { issuer: issuerText, clientId, clientSecret, domains, defaultRole: input.defaultRole };
}

export function connectionView(row: SsoConnectionRow): SsoConnectionView {
  return {
    id: row.id,
    issuer: row.issuer,
    clientId: row.clientId,
    clientSecretSet: true,
    domains: row.domains,
    defaultRole: row.defaultRole,
    requireSso: row.requireSso,
    testedAt: row.testedAt?.toISOString() ?? null,
    testedAs: row.testedAs,
    updatedAt: row.updatedAt.toISOString(),
  };
}

/** The studio's active and pending connections (either may be null). */
export async function connectionsOf(
  db: Db | Tx,
  tenantId: string,
): Promise<{ active: SsoConnectionRow | null; pending: SsoConnectionRow | null }> {
  const rows = await db.select().from(ssoConnections).where(eq(ssoConnections.tenantId, tenantId));
  return {
    active: rows.find((r) => r.state === "active") ?? null,
    pending: rows.find((r) => r.state === "pending") ?? null,
  };
}

/** The domain of an email address (after its last @), lower-cased; empty when there is none. */
export function emailDomain(email: string): string {
  const at = email.lastIndexOf("@");
  return at < 0
    ? ""
    : email
        .slice(at + 1)
        .trim()
        .toLowerCase();
}

/**
 * The active connection of the studio that claims the email's domain and has proven it owns it (its
 * TXT record seen, domains.ts), or null: an unproven domain routes nobody to a provider.
 */
export async function connectionForEmail(db: Db, email: string): Promise<SsoConnectionRow | null> {
  const domain = emailDomain(email);
  if (!domain) {
    return null;
  }
  const [row] = await db
    .select({ connection: ssoConnections })
    .from(ssoDomains)
    .innerJoin(ssoConnections, eq(ssoConnections.id, ssoDomains.connectionId))
    .innerJoin(
      ssoDomainProofs,
      and(eq(ssoDomainProofs.tenantId, ssoDomains.tenantId), eq(ssoDomainProofs.domain, ssoDomains.domain)),
    )
    .where(
      and(
        eq(ssoDomains.domain, domain),
        eq(ssoConnections.state, "active"),
        isNotNull(ssoDomainProofs.verifiedAt),
      ),
    )
    .limit(1);
  return row?.connection ?? null;
}

/**
 * Stores the submitted configuration as the studio's pending connection, after checking it and
 * discovering the provider (its issuer must be the one its metadata names). The secret is sealed
 * before it is stored; an empty one keeps the stored secret. Nothing sign-in uses changes.
 */
export async function submitPending(
  db: Db,
  secretKey: string,
  tenantId: string,
  userId: string,
  raw: SsoInput,
): Promise<SsoConnectionRow> {
  const input = checkSsoInput(raw);
  const taken = await domainsProvenElsewhere(db, tenantId, input.domains);
  if (taken.length > 0) {
    throw new ApiError(
      "CONFLICT",
      `domains: ${taken.join(", ")} already signs in with another studio's provider (that studio proved it owns it)`,
      {
        extensions: { field: "domains" },
      },
    );
  }
  const { active, pending } = await connectionsOf(db, tenantId);
  const kept = pending?.clientSecret ?? active?.clientSecret;
  const sealed = input.clientSecret ? await sealSecret(secretKey, tenantId, input.clientSecret) : kept;
  if (!sealed) {
    throw bad("clientSecret", "is required (the provider gives it with the client id)");
  }
  const as = await discover(input.issuer);
  const values = {
    issuer: as.issuer,
    clientId: input.clientId,
    clientSecret: sealed,
    domains: input.domains,
    defaultRole: input.defaultRole,
    createdBy: userId,
    testedAt: null,
    testedAs: null,
    updatedAt: new Date(),
  };
  // A new row (a new id) each time: a test started for an earlier submission ends as
  // `configuration_replaced` (its flow goes with the old row) instead of saving this one untested.
  const [row] = await db.transaction(async (tx) => {
    await tx
      .delete(ssoConnections)
      .where(and(eq(ssoConnections.tenantId, tenantId), eq(ssoConnections.state, "pending")));
    // Each domain's DNS record to publish, shown from now on (the same token across changes).
    await ensureProofs(tx, tenantId, input.domains);
    return tx
      .insert(ssoConnections)
      .values({ tenantId, state: "pending", ...values })
      .returning();
  });
  if (!row) {
    throw new Error("sso: the pending connection was not stored");
  }
  return row;
}

/**
 * Removes the studio's connections (active and pending) and frees their domains (claims gone, proofs
 * unverified: set up again, the same records are checked again); what was removed.
 */
export async function removeConnections(db: Db | Tx, tenantId: string): Promise<SsoConnectionRow[]> {
  await unverifyAll(db, tenantId);
  return db.delete(ssoConnections).where(eq(ssoConnections.tenantId, tenantId)).returning();
}
