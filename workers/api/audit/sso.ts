import type { Context } from "hono";
import type { SsoConnectionRow } from "../../../schema/pg/schema.js";
import type { AppEnv } from "../context.js";
import type { Db } from "../db.js";
import type { FlowOutcome } from "../sso/flow.js";
import { type AuditActor, audit } from "./record.js";

// Single sign-on's entries (docs/accounts.md, "Single sign-on" and "Audit log"): the configuration's
// changes, each SSO sign-in, each refused one with its reason. Never the client secret, a code or a token.

/** The window refused callbacks of no known flow are counted in, per IP (as failed sign-ins are). */
const UNKNOWN_FLOW_WINDOW_SECONDS = 15 * 60;

export function connectionTarget(row: Pick<SsoConnectionRow, "id" | "issuer">) {
  return { type: "sso_connection", id: row.id, label: row.issuer };
}

/** The configuration as the log keeps it: what it is, never the secret. */
export function connectionDetail(row: SsoConnectionRow) {
  return {
    issuer: row.issuer,
    clientId: row.clientId,
    domains: row.domains.join(","),
    defaultRole: row.defaultRole,
  };
}

/** sso.submitted / sso.configured / sso.changed / sso.removed / sso.test_failed, by an owner. */
export async function auditSsoChange<E extends AppEnv>(
  c: Context<E>,
  actor: AuditActor,
  tenantId: string,
  action: `sso.${string}`,
  row: SsoConnectionRow,
  extra: Record<string, string | number | boolean | null> = {},
  db?: Db,
  outcome: "success" | "failure" | "denied" = "success",
): Promise<void> {
  await audit(
    c,
    {
      action,
      actor,
      tenantId,
      projectId: null,
      outcome,
      target: connectionTarget(row),
      detail: { ...connectionDetail(row), ...extra },
    },
    db,
  );
}

/**
 * A refused SSO callback: `user.sign_in_failed` (a sign-in) or `sso.test_failed` (an owner's test) in
 * the flow's studio, with `detail.reason`. A callback of no known flow (a forged or guessed `state`)
 * belongs to no studio and is counted per IP and window rather than written one row each.
 */
export async function auditSsoRefusal<E extends AppEnv>(
  c: Context<E>,
  outcome: Extract<FlowOutcome, { ok: false }>,
  actor: AuditActor | null,
): Promise<void> {
  const flow = outcome.flow;
  const detail = {
    method: "sso",
    reason: outcome.reason,
    ...(outcome.detail ? { cause: outcome.detail.slice(0, 100) } : {}),
    ...(outcome.email ? { email: outcome.email } : {}),
    // A confirmation of an account's deletion (a sign-in again) that failed.
    ...(flow?.purpose === "delete_account" ? { purpose: "delete_account" } : {}),
  };
  const who = outcome.email ?? flow?.email ?? "unknown";
  if (!flow) {
    await audit(c, {
      action: "user.sign_in_failed",
      outcome: "failure",
      actor: { type: "user", id: null, label: who },
      tenantId: null,
      projectId: null,
      target: null,
      detail,
      aggregate: {
        key: `sso|${c.req.header("cf-connecting-ip") ?? ""}|${outcome.reason}`,
        windowSeconds: UNKNOWN_FLOW_WINDOW_SECONDS,
      },
    });
    return;
  }
  await audit(c, {
    action: flow.purpose === "test" ? "sso.test_failed" : "user.sign_in_failed",
    outcome: "failure",
    actor: actor ?? { type: "user", id: null, label: who },
    tenantId: flow.tenantId,
    projectId: null,
    target: { type: "sso_connection", id: flow.connectionId, label: null },
    detail,
  });
}
