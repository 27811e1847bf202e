import type { Context } from "hono";
import { ApiError } from "../../shared/errors.js";
import { audit, userLabel } from "../audit/record.js";
import type { AppEnv } from "../context.js";
import { type DomainProofView, proofView, verifyDomain } from "./domains.js";

// "Verify" (the page and the API): the owner's check of a domain's DNS record, audited in the studio
// (`sso.domain_verified`, `failure` with `detail.reason: record_missing` when the record is not there),
// and in the studio whose earlier proof gave way (`sso.domain_released`). A resolver that fails is a
// 503 and no entry: nothing was learned.

export async function verifyAndAudit<E extends AppEnv>(
  c: Context<E>,
  tenantId: string,
  userId: string,
  domain: string,
): Promise<{
  view: DomainProofView;
  verified: boolean;
  found: boolean;
  changed: boolean;
  recordsFound: number;
}> {
  const resolver = c.get("config").SSO_DNS_RESOLVER;
  if (!resolver) {
    throw new ApiError(
      "UNAVAILABLE",
      "Domains cannot be verified on this deployment: its SSO_DNS_RESOLVER is not set.",
    );
  }
  const db = c.get("db");
  const now = new Date(c.get("now"));
  const outcome = await verifyDomain(db, resolver, tenantId, domain, now);
  const actor = { type: "user" as const, id: userId, label: await userLabel(db, userId), userId };
  const target = { type: "sso_domain", id: domain, label: domain };
  // A re-check of a verified domain whose record is gone leaves it verified (sign-ins keep working);
  // the entry says the record was not found.
  const found = outcome.found;
  await audit(c, {
    action: "sso.domain_verified",
    actor,
    tenantId,
    projectId: null,
    outcome: found ? "success" : "failure",
    target,
    detail: {
      domain,
      verified: outcome.verified,
      recordsFound: outcome.recordsFound,
      ...(found ? {} : { reason: "record_missing" }),
      ...(outcome.replaced ? { replacedStudio: outcome.replaced } : {}),
    },
  });
  if (outcome.replaced) {
    await audit(c, {
      action: "sso.domain_released",
      actor: { type: "system", id: null, label: "DNS check" },
      tenantId: outcome.replaced,
      projectId: null,
      outcome: "success",
      target,
      detail: { domain, reason: "record_gone", provenBy: tenantId },
    });
  }
  return {
    view: proofView(outcome.proof),
    verified: outcome.verified,
    found: outcome.found,
    changed: outcome.changed,
    recordsFound: outcome.recordsFound,
  };
}
