import { eq, sql } from "drizzle-orm";
import type { Context } from "hono";
import type { AuditActorType, AuditDetail, AuditOutcome } from "../../../schema/pg/columns.js";
import { apiKeys, auditLog, memberships, users } from "../../../schema/pg/schema.js";
import type { AppEnv } from "../context.js";
import { type GrantHolder, grantById } from "../credentials/grants.js";
import { currentUser } from "../credentials/session-cookie.js";
import type { Db } from "../db.js";

// The audit log's one writer (docs/accounts.md, "Audit log"). Every security-relevant change records one
// entry through `audit(c, …)` inside a request, or `auditOutside(db, …)` in a queue consumer, the cron
// or the admin CLI. Pass the change's transaction as `db` whenever the change runs in one: the entry
// then commits or rolls back with it. A failed insert is thrown, never swallowed, so a change cannot
// succeed silently without its entry: inside a transaction the change rolls back; outside one the
// request fails (a down Postgres answers the house's retryable 503).

/** A dotted verb, `<noun>.<past participle>`: `key.created`, `member.role_changed` (docs/accounts.md). */
export type AuditAction = `${string}.${string}`;

/** Who acted, as they were when they did: the label (email, key name) is kept, not looked up later. */
export type AuditActor = {
  type: AuditActorType;
  /** A user's, key's or OAuth client's id; null for the operator and the system. */
  id: string | null;
  label: string;
  /** The person behind the actor (a session's user, the user an OAuth token acts for). */
  userId?: string | null;
};

/** What the action was done to; `label` is how it was named then (an email, a key's name). */
export type AuditTarget = { type: string; id: string | null; label?: string | null };

export type AuditInput = {
  action: AuditAction;
  target?: AuditTarget | null;
  /** Default "success". */
  outcome?: AuditOutcome;
  /** Default: the principal's studio. Null: an entry of no studio (read by no owner). */
  tenantId?: string | null;
  /** Default: the key's project for a key, else none. */
  projectId?: string | null;
  detail?: AuditDetail;
  /** Default: derived from the request (audit()); required outside one. */
  actor?: AuditActor;
  /**
   * Counts repeated attempts in one row instead of one row each (failed sign-ins): entries with the
   * same key within the same window of `windowSeconds` add to one row's `count`.
   */
  aggregate?: { key: string; windowSeconds: number };
};

/** Everything an entry needs when there is no request to read it from. */
export type AuditOutsideInput = AuditInput & {
  actor: AuditActor;
  tenantId: string | null;
  at: Date;
  ip?: string | null;
  userAgent?: string | null;
};

/** The system itself (cron, queue consumers) as an actor. */
export const SYSTEM_ACTOR: AuditActor = { type: "system", id: null, label: "system" };
/** The operator (OPERATOR_SECRET, the admin CLI) as an actor. */
export const OPERATOR_ACTOR: AuditActor = { type: "operator", id: null, label: "operator" };

const MAX_USER_AGENT = 512;

/**
 * Records one entry for this request: the actor from its principal (a session's user, an API key, an
 * OAuth token's client and user, an admin-made token as the operator) or, on pages, the signed-in
 * user; the IP from CF-Connecting-IP; the user agent; the time from c.var.now. `db` is the change's
 * transaction when it has one (default c.var.db). Throws when there is no actor to derive and none is
 * given, and when the insert fails.
 */
export async function audit<E extends AppEnv>(c: Context<E>, input: AuditInput, db?: Db): Promise<void> {
  const handle: Db = db ?? c.get("db");
  const derived = input.actor ? null : await requestActor(c, handle);
  const actor = input.actor ?? derived?.actor;
  if (!actor) {
    throw new Error(`audit ${input.action}: the request has no principal; pass the actor`);
  }
  const tenantId = input.tenantId !== undefined ? input.tenantId : (derived?.tenantId ?? null);
  await auditOutside(handle, {
    ...input,
    actor,
    tenantId,
    projectId: input.projectId !== undefined ? input.projectId : (derived?.projectId ?? null),
    at: new Date(c.get("now")),
    ip: requestIp(c),
    userAgent: c.req.header("user-agent") ?? null,
  });
}

/**
 * Records an event of a person rather than of one studio (sign-in, password change, sign-out): one
 * entry in every studio `userId` belongs to, so each studio's owners see it, or one entry of no studio
 * when they belong to none. An `aggregate` key is kept apart per studio.
 */
export async function auditUser<E extends AppEnv>(
  c: Context<E>,
  userId: string,
  input: Omit<AuditInput, "tenantId">,
  db?: Db,
): Promise<void> {
  const handle: Db = db ?? c.get("db");
  const rows = await handle
    .select({ tenantId: memberships.tenantId })
    .from(memberships)
    .where(eq(memberships.userId, userId));
  const tenantIds = rows.length > 0 ? rows.map((r) => r.tenantId) : [null];
  for (const tenantId of tenantIds) {
    const aggregate = input.aggregate && { ...input.aggregate, key: `${input.aggregate.key}|${tenantId}` };
    await audit(c, { ...input, tenantId, projectId: null, aggregate }, handle);
  }
}

/** A user's email, as a target's or actor's label (their id when they no longer exist). */
export async function userLabel(db: Db, userId: string): Promise<string> {
  const [user] = await db.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
  return user?.email ?? userId;
}

/** A key's label: its name, else its prefix (never more of the secret than the page shows). */
export async function keyLabel(db: Db, keyId: string): Promise<string> {
  const [key] = await db
    .select({ name: apiKeys.name, prefix: apiKeys.prefix })
    .from(apiKeys)
    .where(eq(apiKeys.id, keyId))
    .limit(1);
  return key ? (key.name ?? `${key.prefix}…`) : keyId;
}

/** Records one entry outside a request (queue consumers, the cron, the admin CLI, tests). */
export async function auditOutside(db: Db, input: AuditOutsideInput): Promise<void> {
  const at = input.at;
  const values = {
    tenantId: input.tenantId,
    projectId: input.projectId ?? null,
    actorType: input.actor.type,
    actorId: input.actor.id,
    actorLabel: input.actor.label,
    actorUserId: input.actor.userId ?? null,
    action: input.action,
    targetType: input.target?.type ?? null,
    targetId: input.target?.id ?? null,
    targetLabel: input.target?.label ?? null,
    ip: input.ip ?? null,
    userAgent: input.userAgent ? input.userAgent.slice(0, MAX_USER_AGENT) : null,
    outcome: input.outcome ?? "success",
    detail: input.detail ?? {},
    at,
    lastAt: at,
  };
  if (!input.aggregate) {
    await db.insert(auditLog).values(values);
    return;
  }
  const windowMs = input.aggregate.windowSeconds * 1000;
  const windowStart = new Date(Math.floor(at.getTime() / windowMs) * windowMs);
  await db
    .insert(auditLog)
    .values({
      ...values,
      aggregateKey: `${input.action}:${input.aggregate.key}:${windowStart.toISOString()}`,
      at: windowStart,
    })
    .onConflictDoUpdate({
      target: auditLog.aggregateKey,
      set: {
        count: sql`${auditLog.count} + 1`,
        lastAt: sql`greatest(${auditLog.lastAt}, excluded.last_at)`,
      },
    });
}

/** A grant as the audit log names it: its client acting for its user, in its studio. */
export type GrantParties = { tenantId: string; actor: AuditActor; target: AuditTarget };

export function grantParties(g: GrantHolder): GrantParties {
  const label = `${g.clientName} (${g.email})`;
  return {
    tenantId: g.tenantId,
    actor: { type: "oauth_client", id: g.clientId, label, userId: g.userId },
    target: { type: "grant", id: g.grantId, label },
  };
}

/** The client's address as Cloudflare reports it; null when absent (local calls without the header). */
export function requestIp<E extends AppEnv>(c: Context<E>): string | null {
  return c.req.header("cf-connecting-ip") ?? null;
}

type Derived = { actor: AuditActor; tenantId: string | null; projectId: string | null };

export async function requestActor<E extends AppEnv>(c: Context<E>, db: Db): Promise<Derived | null> {
  const p = c.get("principal");
  if (!p) {
    const user = await currentUser(c);
    return user
      ? {
          actor: { type: "user", id: user.userId, label: user.email, userId: user.userId },
          tenantId: null,
          projectId: null,
        }
      : null;
  }
  if (p.kind === "session") {
    const user = await currentUser(c);
    return {
      actor: { type: "user", id: p.userId, label: user?.email ?? p.userId, userId: p.userId },
      tenantId: p.tenantId,
      projectId: null,
    };
  }
  if (p.kind === "key") {
    return {
      actor: { type: "api_key", id: p.keyId, label: await keyLabel(db, p.keyId) },
      tenantId: p.tenantId,
      projectId: p.projectId,
    };
  }
  if (p.grantId === null) {
    // Tokens without a grant are made by the operator (admin CLI `token create`).
    return {
      actor: { ...OPERATOR_ACTOR, label: `operator token ${p.tokenId}` },
      tenantId: p.tenantId,
      projectId: null,
    };
  }
  const grant = await grantById(db, p.grantId);
  return {
    actor: grant
      ? grantParties(grant).actor
      : { type: "oauth_client", id: null, label: `grant ${p.grantId}` },
    tenantId: p.tenantId,
    projectId: null,
  };
}
