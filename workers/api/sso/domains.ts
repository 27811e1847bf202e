import { and, eq, inArray, isNotNull, ne } from "drizzle-orm";
import {
  type SsoDomainProofRow,
  ssoConnections,
  ssoDomainProofs,
  ssoDomains,
} from "../../../schema/pg/schema.js";
import { toHex } from "../../shared/credentials/secrets.js";
import { ApiError } from "../../shared/errors.js";
import type { Db, Tx } from "../db.js";
import { txtRecords } from "./dns.js";

// Proving that a studio owns an email domain (docs/accounts.md, "Single sign-on: proving a domain").
// Typing a domain proves nothing: a studio could send another company's people to its own provider.
// So each (studio, domain) gets a random token, the owner publishes it as a DNS TXT record, and
// "Verify" looks it up through the DNS-over-HTTPS resolver the configuration names. Only a verified
// domain routes sign-ins to the studio's provider, and only one studio's at a time.

/** The TXT record's name is `_gt-sso.<domain>`; its value `gt-sso-verification=<token>`. */
export const PROOF_LABEL = "_gt-sso";
export const PROOF_VALUE_PREFIX = "gt-sso-verification=";

export type DomainProofView = {
  domain: string;
  record: { type: "TXT"; name: string; value: string };
  verified: boolean;
  verifiedAt: string | null;
  checkedAt: string | null;
};

export function recordName(domain: string): string {
  return `${PROOF_LABEL}.${domain}`;
}

export function recordValue(token: string): string {
  return `${PROOF_VALUE_PREFIX}${token}`;
}

export function proofView(row: SsoDomainProofRow): DomainProofView {
  return {
    domain: row.domain,
    record: { type: "TXT", name: recordName(row.domain), value: recordValue(row.token) },
    verified: row.verifiedAt !== null,
    verifiedAt: row.verifiedAt?.toISOString() ?? null,
    checkedAt: row.checkedAt?.toISOString() ?? null,
  };
}

/** 128 random bits, hex (the migration's tokens for existing domains are 122 bits of a UUID). */
function newToken(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(16)));
}

/** A token for each domain the studio names that has none yet (kept across changes of configuration). */
export async function ensureProofs(db: Db | Tx, tenantId: string, domains: string[]): Promise<void> {
  if (domains.length === 0) {
    return;
  }
  await db
    .insert(ssoDomainProofs)
    .values(domains.map((domain) => ({ tenantId, domain, token: newToken() })))
    .onConflictDoNothing();
}

/** The studio's proofs of these domains, in their order (a domain without one is left out). */
export async function proofsOf(
  db: Db | Tx,
  tenantId: string,
  domains: string[],
): Promise<SsoDomainProofRow[]> {
  if (domains.length === 0) {
    return [];
  }
  const rows = await db
    .select()
    .from(ssoDomainProofs)
    .where(and(eq(ssoDomainProofs.tenantId, tenantId), inArray(ssoDomainProofs.domain, domains)));
  const byDomain = new Map(rows.map((r) => [r.domain, r]));
  return domains.flatMap((d) => byDomain.get(d) ?? []);
}

/** Domains of `domains` that another studio has proven. */
export async function domainsProvenElsewhere(db: Db | Tx, tenantId: string, domains: string[]) {
  if (domains.length === 0) {
    return [];
  }
  const rows = await db
    .select({ domain: ssoDomainProofs.domain })
    .from(ssoDomainProofs)
    .where(
      and(
        inArray(ssoDomainProofs.domain, domains),
        ne(ssoDomainProofs.tenantId, tenantId),
        isNotNull(ssoDomainProofs.verifiedAt),
      ),
    );
  return rows.map((r) => r.domain);
}

/**
 * Claims of these domains by other studios that have not proven them: they give way to this studio's
 * claim (a studio that typed a domain cannot hold it against the one that owns it).
 */
export async function dropUnprovenClaims(tx: Tx, tenantId: string, domains: string[]): Promise<void> {
  if (domains.length === 0) {
    return;
  }
  const claims = await tx
    .select({ domain: ssoDomains.domain, tenantId: ssoDomains.tenantId })
    .from(ssoDomains)
    .where(and(inArray(ssoDomains.domain, domains), ne(ssoDomains.tenantId, tenantId)));
  for (const claim of claims) {
    const proven = await domainsProvenElsewhere(tx, tenantId, [claim.domain]);
    if (proven.length === 0) {
      await tx
        .delete(ssoDomains)
        .where(and(eq(ssoDomains.domain, claim.domain), eq(ssoDomains.tenantId, claim.tenantId)));
    }
  }
}

export type VerifyOutcome = {
  proof: SsoDomainProofRow;
  verified: boolean;
  /** Whether this lookup found the studio's record. */
  found: boolean;
  /** Whether this check made it verified (false when it already was, or is not). */
  changed: boolean;
  /** How many TXT records the name has (none of them ours when not verified). */
  recordsFound: number;
  /** The studio whose proof of the domain this one replaced (its record is gone from DNS). */
  replaced: string | null;
};

/**
 * Looks the studio's record up and records the outcome. Found: the domain is verified for this studio,
 * and routes sign-ins when the studio's active configuration names it. Another studio's earlier proof
 * gives way only when its own record is gone from DNS (the domain changed hands); if both are there,
 * 409. A resolver that fails is a retryable 503 and changes nothing.
 */
export async function verifyDomain(
  db: Db,
  resolver: string,
  tenantId: string,
  domain: string,
  now: Date,
): Promise<VerifyOutcome> {
  const [proof] = await proofsOf(db, tenantId, [domain]);
  if (!proof) {
    throw new ApiError("NOT_FOUND", `domain: ${domain} is not a domain of this studio's single sign-on`, {
      extensions: { field: "domain" },
    });
  }
  const records = await txtRecords(resolver, recordName(domain));
  const found = records.includes(recordValue(proof.token));
  try {
    return await recordCheck(db, proof, records, found, now);
  } catch (err) {
    // Two studios' proofs of one domain verified at the same moment: the partial unique index lets one
    // through; the other is the same conflict as above, not a 500.
    if (uniqueViolation(err)) {
      throw new ApiError("CONFLICT", `domain: ${domain} was just proven by another studio`, {
        extensions: { field: "domain" },
      });
    }
    throw err;
  }
}

function uniqueViolation(err: unknown): boolean {
  for (let e: unknown = err; e && typeof e === "object"; e = (e as { cause?: unknown }).cause) {
    if ((e as { code?: unknown }).code === "23505") {
      return true;
    }
  }
  return false;
}

async function recordCheck(
  db: Db,
  proof: SsoDomainProofRow,
  records: string[],
  found: boolean,
  now: Date,
): Promise<VerifyOutcome> {
  const { tenantId, domain } = proof;
  return db.transaction(async (tx) => {
    if (!found) {
      const [row] = await tx
        .update(ssoDomainProofs)
        .set({ checkedAt: now })
        .where(and(eq(ssoDomainProofs.tenantId, tenantId), eq(ssoDomainProofs.domain, domain)))
        .returning();
      return {
        proof: row ?? proof,
        verified: row?.verifiedAt != null,
        found: false,
        changed: false,
        recordsFound: records.length,
        replaced: null,
      };
    }
    const [other] = await tx
      .select()
      .from(ssoDomainProofs)
      .where(
        and(
          eq(ssoDomainProofs.domain, domain),
          ne(ssoDomainProofs.tenantId, tenantId),
          isNotNull(ssoDomainProofs.verifiedAt),
        ),
      )
      .for("update");
    if (other) {
      if (records.includes(recordValue(other.token))) {
        throw new ApiError(
          "CONFLICT",
          `domain: ${domain} is proven by another studio, whose TXT record is still published; remove it first`,
          { extensions: { field: "domain" } },
        );
      }
      await tx
        .update(ssoDomainProofs)
        .set({ verifiedAt: null, checkedAt: now })
        .where(and(eq(ssoDomainProofs.tenantId, other.tenantId), eq(ssoDomainProofs.domain, domain)));
      await tx
        .delete(ssoDomains)
        .where(and(eq(ssoDomains.domain, domain), eq(ssoDomains.tenantId, other.tenantId)));
    }
    const [row] = await tx
      .update(ssoDomainProofs)
      .set({ verifiedAt: proof.verifiedAt ?? now, checkedAt: now, noticeDue: false })
      .where(and(eq(ssoDomainProofs.tenantId, tenantId), eq(ssoDomainProofs.domain, domain)))
      .returning();
    // The active configuration naming it claims it now (an unproven claim elsewhere gives way).
    const [active] = await tx
      .select()
      .from(ssoConnections)
      .where(and(eq(ssoConnections.tenantId, tenantId), eq(ssoConnections.state, "active")));
    if (active?.domains.includes(domain)) {
      await dropUnprovenClaims(tx, tenantId, [domain]);
      await tx.insert(ssoDomains).values({ domain, tenantId, connectionId: active.id }).onConflictDoNothing();
    }
    return {
      proof: row ?? proof,
      verified: true,
      found: true,
      changed: proof.verifiedAt === null,
      recordsFound: records.length,
      replaced: other?.tenantId ?? null,
    };
  });
}

/** Removing single sign-on: the studio's proofs stay (same records), but unverified until checked again. */
export async function unverifyAll(tx: Db | Tx, tenantId: string): Promise<void> {
  await tx.update(ssoDomainProofs).set({ verifiedAt: null }).where(eq(ssoDomainProofs.tenantId, tenantId));
}
