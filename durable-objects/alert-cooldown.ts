import { DurableObject } from "cloudflare:workers";

export type CooldownClaim = {
  /** True when a notification may go out now; the time is then recorded as the last notification. */
  allowed: boolean;
  /** Unix ms of the last notification before this claim, or null if there was none. */
  lastNotifiedAt: number | null;
};

/** How long an event's claim and its deliveries are remembered: far past any queue's retries. */
const REMEMBER_MS = 7 * 86_400_000;
/** A delivery in progress longer than this is taken to have died (posts time out after 10 s). */
const BUSY_MS = 60_000;

/**
 * One instance per (alert rule, threshold profile), named `${ruleId}:${profileId}`. It holds when that
 * pair last notified. A claim checks and stamps in one synchronous step, so two evaluations racing for
 * the same pair cannot both notify.
 *
 * A claim made for an evaluation event (its id) is remembered with its answer: the same event claiming
 * again (a redelivered queue message, a consumer that died after claiming) gets the same answer rather
 * than a second stamp. The object also holds the (event, channel) deliveries in progress and done, so
 * a notification handed to the queue twice (the outbox's window between sending and clearing, see
 * workers/api/alerts/evaluate.ts) is posted once, even when both copies arrive at once.
 */
export class AlertCooldown extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec(
      "CREATE TABLE IF NOT EXISTS cooldown (id INTEGER PRIMARY KEY CHECK (id = 1), last_notified_ms INTEGER NOT NULL)",
    );
    sql.exec(
      "CREATE TABLE IF NOT EXISTS claims (event_id TEXT PRIMARY KEY, allowed INTEGER NOT NULL, last_ms INTEGER, at_ms INTEGER NOT NULL)",
    );
    sql.exec(
      "CREATE TABLE IF NOT EXISTS deliveries (event_id TEXT NOT NULL, channel_id TEXT NOT NULL, at_ms INTEGER NOT NULL, PRIMARY KEY (event_id, channel_id))",
    );
    sql.exec(
      "CREATE TABLE IF NOT EXISTS delivering (event_id TEXT NOT NULL, channel_id TEXT NOT NULL, since_ms INTEGER NOT NULL, PRIMARY KEY (event_id, channel_id))",
    );
  }

  claim(cooldownMinutes: number, nowMs = Date.now(), eventId?: string): CooldownClaim {
    const sql = this.ctx.storage.sql;
    if (eventId !== undefined) {
      const [done] = sql
        .exec<{ allowed: number; last_ms: number | null }>(
          "SELECT allowed, last_ms FROM claims WHERE event_id = ?",
          eventId,
        )
        .toArray();
      if (done) {
        return {
          allowed: done.allowed === 1,
          lastNotifiedAt: done.last_ms === null ? null : Number(done.last_ms),
        };
      }
    }
    const [row] = sql.exec<{ last_notified_ms: number }>("SELECT last_notified_ms FROM cooldown").toArray();
    const last = row ? Number(row.last_notified_ms) : null;
    const allowed = last === null || nowMs - last >= cooldownMinutes * 60_000;
    if (allowed) {
      sql.exec(
        "INSERT INTO cooldown (id, last_notified_ms) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET last_notified_ms = excluded.last_notified_ms",
        nowMs,
      );
    }
    if (eventId !== undefined) {
      sql.exec(
        "INSERT INTO claims (event_id, allowed, last_ms, at_ms) VALUES (?, ?, ?, ?)",
        eventId,
        allowed ? 1 : 0,
        last,
        Date.now(),
      );
      this.forget();
    }
    return { allowed, lastNotifiedAt: last };
  }

  /** Undoes a claim whose notifications could not be handed to the queue, so the next change retries. */
  release(previous: number | null, eventId?: string): void {
    if (previous === null) {
      this.ctx.storage.sql.exec("DELETE FROM cooldown");
    } else {
      this.ctx.storage.sql.exec("UPDATE cooldown SET last_notified_ms = ?", previous);
    }
    if (eventId !== undefined) {
      this.ctx.storage.sql.exec("DELETE FROM claims WHERE event_id = ?", eventId);
    }
  }

  /**
   * Before posting an event's notification to a channel: "go" (this caller posts, others wait), "done"
   * (already delivered: drop this copy) or "busy" (another copy is posting right now: retry later). A
   * claim older than BUSY_MS is taken over (its holder died).
   */
  claimDelivery(eventId: string, channelId: string, nowMs = Date.now()): "go" | "done" | "busy" {
    const sql = this.ctx.storage.sql;
    if (
      sql.exec("SELECT 1 FROM deliveries WHERE event_id = ? AND channel_id = ?", eventId, channelId).toArray()
        .length
    ) {
      return "done";
    }
    const [held] = sql
      .exec<{ since_ms: number }>(
        "SELECT since_ms FROM delivering WHERE event_id = ? AND channel_id = ?",
        eventId,
        channelId,
      )
      .toArray();
    if (held && nowMs - Number(held.since_ms) < BUSY_MS) {
      return "busy";
    }
    sql.exec(
      "INSERT INTO delivering (event_id, channel_id, since_ms) VALUES (?, ?, ?) ON CONFLICT (event_id, channel_id) DO UPDATE SET since_ms = excluded.since_ms",
      eventId,
      channelId,
      nowMs,
    );
    return "go";
  }

  /** After posting: a delivery the endpoint acknowledged (or refused for good) is never posted again. */
  finishDelivery(eventId: string, channelId: string, final: boolean): void {
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM delivering WHERE event_id = ? AND channel_id = ?", eventId, channelId);
    if (final) {
      sql.exec(
        "INSERT INTO deliveries (event_id, channel_id, at_ms) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        eventId,
        channelId,
        Date.now(),
      );
    }
  }

  private forget(): void {
    const before = Date.now() - REMEMBER_MS;
    this.ctx.storage.sql.exec("DELETE FROM claims WHERE at_ms < ?", before);
    this.ctx.storage.sql.exec("DELETE FROM deliveries WHERE at_ms < ?", before);
    this.ctx.storage.sql.exec("DELETE FROM delivering WHERE since_ms < ?", before);
  }
}
