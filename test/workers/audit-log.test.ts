import { env } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { auditLog } from "../../schema/pg/schema.js";
import { AUDIT_RETENTION_DAYS, purgeAuditLog } from "../../workers/api/audit/purge.js";
import { audit, auditOutside, SYSTEM_ACTOR } from "../../workers/api/audit/record.js";
import type { AppEnv } from "../../workers/api/context.js";
import type { Principal } from "../../workers/shared/credentials/principal.js";
import { auditEntries, onlyAuditEntry } from "../support/audit.js";
import { seedTenant, withDb } from "../support/harness.js";

const DAY = 86_400_000;

/** The error Postgres raised for a statement, as text ("" when it succeeded). */
async function refusal(run: () => Promise<unknown>): Promise<string> {
  try {
    await run();
    return "";
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : "";
    return `${err instanceof Error ? err.message : String(err)} ${cause}`;
  }
}

describe("audit_log in Postgres", () => {
  it("refuses UPDATE, DELETE and TRUNCATE of an entry, from any connection", async () => {
    const t = await seedTenant("pro", "Audit Immutable");
    await withDb((db) =>
      auditOutside(db, {
        tenantId: t.tenantId,
        actor: SYSTEM_ACTOR,
        action: "test.recorded",
        target: { type: "project", id: t.projectId, label: "main" },
        at: new Date(),
      }),
    );
    const entry = await onlyAuditEntry(t.tenantId, "test.recorded");
    expect(entry).toMatchObject({ actorType: "system", outcome: "success", count: 1, targetId: t.projectId });

    const update = await refusal(() =>
      withDb((db) =>
        db.update(auditLog).set({ actorLabel: "someone else" }).where(eq(auditLog.id, entry.id)),
      ),
    );
    expect(update).toContain("audit_log entries cannot be changed");
    const del = await refusal(() => withDb((db) => db.delete(auditLog).where(eq(auditLog.id, entry.id))));
    expect(del).toContain("audit_log entries are kept for 400 days");
    const truncate = await refusal(() => withDb((db) => db.execute(sql`TRUNCATE audit_log`)));
    expect(truncate).toContain("audit_log cannot be truncated");
    // Not even the count of an entry that is not aggregated.
    const count = await refusal(() =>
      withDb((db) => db.update(auditLog).set({ count: 2 }).where(eq(auditLog.id, entry.id))),
    );
    expect(count).toContain("audit_log entries cannot be changed");
    expect(await auditEntries(t.tenantId, "test.recorded")).toEqual([entry]);
  });

  it("aggregates repeated attempts per key and window into one row whose count only grows", async () => {
    const t = await seedTenant("pro", "Audit Aggregate");
    const at = Date.UTC(2026, 5, 1, 10, 3);
    const attempt = (ms: number, key = "a@example.com|203.0.113.9") =>
      withDb((db) =>
        auditOutside(db, {
          tenantId: t.tenantId,
          actor: { type: "user", id: null, label: "a@example.com" },
          action: "test.failed",
          outcome: "failure",
          aggregate: { key, windowSeconds: 900 },
          at: new Date(ms),
        }),
      );
    await attempt(at);
    await attempt(at + 60_000);
    await attempt(at + 120_000);
    await attempt(at + 60_000, "a@example.com|198.51.100.1");
    await attempt(at + 15 * 60_000);
    // Oldest window first; within a window, by count.
    const rows = (await auditEntries(t.tenantId, "test.failed")).sort(
      (x, y) => x.at.getTime() - y.at.getTime() || y.count - x.count,
    );
    expect(rows.map((r) => [r.at.getTime(), r.lastAt.getTime(), r.count])).toEqual([
      [Date.UTC(2026, 5, 1, 10, 0), at + 120_000, 3],
      [Date.UTC(2026, 5, 1, 10, 0), at + 60_000, 1],
      [Date.UTC(2026, 5, 1, 10, 15), at + 15 * 60_000, 1],
    ]);
    const first = rows[0];
    if (!first) {
      throw new Error("no row");
    }
    // The aggregated row's count may grow, nothing else of it may change, and it never shrinks.
    const shrink = await refusal(() =>
      withDb((db) => db.update(auditLog).set({ count: 1 }).where(eq(auditLog.id, first.id))),
    );
    expect(shrink).toContain("audit_log entries cannot be changed");
    const relabel = await refusal(() =>
      withDb((db) => db.update(auditLog).set({ count: 9, actorLabel: "x" }).where(eq(auditLog.id, first.id))),
    );
    expect(relabel).toContain("audit_log entries cannot be changed");
  });

  it("the purge deletes entries past the retention and nothing younger", async () => {
    const t = await seedTenant("pro", "Audit Retention");
    const now = Date.now();
    for (const age of [AUDIT_RETENTION_DAYS + 1, AUDIT_RETENTION_DAYS - 1]) {
      await withDb((db) =>
        auditOutside(db, {
          tenantId: t.tenantId,
          actor: SYSTEM_ACTOR,
          action: "test.aged",
          detail: { age },
          at: new Date(now - age * DAY),
        }),
      );
    }
    await withDb((db) => purgeAuditLog(db));
    const left = await auditEntries(t.tenantId, "test.aged");
    expect(left.map((r) => r.detail)).toEqual([{ age: AUDIT_RETENTION_DAYS - 1 }]);
    const young = left[0];
    if (!young) {
      throw new Error("no row");
    }
    const del = await refusal(() => withDb((db) => db.delete(auditLog).where(eq(auditLog.id, young.id))));
    expect(del).toContain("kept for 400 days");
  });
});

describe("audit(c, …): the actor, studio, project, IP, user agent and time from the request", () => {
  /** Runs audit() inside a request whose principal is `principal`. */
  async function record(principal: Principal, action: `${string}.${string}`) {
    await withDb(async (db) => {
      const app = new Hono<AppEnv>();
      app.get("/", async (c) => {
        c.set("now", Date.UTC(2026, 10, 1, 9, 30));
        c.set("db", db);
        c.set("principal", principal);
        await audit(c, { action, target: { type: "thing", id: "t1" } });
        return c.text("ok");
      });
      const res = await app.request(
        "/",
        { headers: { "CF-Connecting-IP": "203.0.113.77", "User-Agent": "audit-test/1" } },
        env,
      );
      expect(res.status).toBe(200);
    });
  }

  it("an API key: the key (its name or prefix), its studio and project", async () => {
    const t = await seedTenant("pro", "Audit Key Actor");
    const key = t.keys.full;
    await record(
      {
        kind: "key",
        keyId: key.id,
        projectId: t.projectId,
        projectName: "main",
        tenantId: t.tenantId,
        planId: "pro",
        scopes: key.scopes,
        lastUsedAt: null,
      },
      "test.by_key",
    );
    expect(await onlyAuditEntry(t.tenantId, "test.by_key")).toMatchObject({
      actorType: "api_key",
      actorId: key.id,
      actorLabel: `${key.key.slice(0, 10)}…`,
      projectId: t.projectId,
      ip: "203.0.113.77",
      userAgent: "audit-test/1",
      at: new Date(Date.UTC(2026, 10, 1, 9, 30)),
      outcome: "success",
    });
  });

  it("an admin-made token: the operator, in the token's studio", async () => {
    const t = await seedTenant("pro", "Audit Token Actor");
    await record(
      {
        kind: "token",
        tokenId: "tok-1",
        tenantId: t.tenantId,
        planId: "pro",
        scopes: ["analytics:read"],
        grantId: null,
        lastUsedAt: null,
        expiresAt: new Date(Date.UTC(2027, 0, 1)),
      },
      "test.by_token",
    );
    expect(await onlyAuditEntry(t.tenantId, "test.by_token")).toMatchObject({
      actorType: "operator",
      actorId: null,
      actorLabel: "operator token tok-1",
      projectId: null,
    });
  });
});
