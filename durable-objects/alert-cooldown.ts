import { DurableObject } from "cloudflare:workers";

export type CooldownClaim = {
  /** True when a notification may go out now; the time is then recorded as the last notification. */
  allowed: boolean;
  /** Unix ms of the last notification before this claim, or null if there was none. */
  lastNotifiedAt: number | null;
};

/**
 * One instance per (alert rule, threshold profile), named `${ruleId}:${profileId}`. It holds when that
 * pair last notified. A claim checks and stamps in one synchronous step, so two evaluations racing for
 * the same pair cannot both notify.
 */
export class AlertCooldown extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS cooldown (id INTEGER PRIMARY KEY CHECK (id = 1), last_notified_ms INTEGER NOT NULL)",
    );
  }

  claim(cooldownMinutes: number, nowMs = Date.now()): CooldownClaim {
    const sql = this.ctx.storage.sql;
    const [row] = sql.exec<{ last_notified_ms: number }>("SELECT last_notified_ms FROM cooldown").toArray();
    const last = row ? Number(row.last_notified_ms) : null;
    const allowed = last === null || nowMs - last >= cooldownMinutes * 60_000;
    if (allowed) {
      sql.exec(
        "INSERT INTO cooldown (id, last_notified_ms) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET last_notified_ms = excluded.last_notified_ms",
        nowMs,
      );
    }
    return { allowed, lastNotifiedAt: last };
  }

  /** Undoes a claim whose notifications could not be handed to the queue, so the next change retries. */
  release(previous: number | null): void {
    if (previous === null) {
      this.ctx.storage.sql.exec("DELETE FROM cooldown");
    } else {
      this.ctx.storage.sql.exec("UPDATE cooldown SET last_notified_ms = ?", previous);
    }
  }
}
