import { DurableObject } from "cloudflare:workers";
import {
  type ActorIds,
  type ActorKind,
  type ActorNumbers,
  type ActorShard,
  SINGLE_SHARD,
} from "../workers/shared/actors.js";
import { ActorNumbering } from "./actor-numbers.js";

/**
 * One instance per project. A consumer claims the batch keys of a delivery before it asks ClickHouse
 * which of their rows are stored and inserts the rest, so two deliveries of one batch (a queue
 * redelivery, or an SDK's retry enqueued twice) can never both pass that check and both insert: a row
 * reaches telemetry.events at most once, which its materialized views rely on. A claim is a lease: the
 * holder releases it after a successful insert, and one whose insert failed or whose isolate died is
 * simply outlived. The lease is far longer than the holder's ClickHouse requests may take (two
 * 30-second requests), so an insert still committing on the server is visible before anyone else may
 * check. Claims live in the object's SQLite storage, so a restart of the object forgets none.
 *
 * A claim also brackets the whole INSERT: taken before it, given back only after ClickHouse confirmed it,
 * that is after the events' part and every materialized view's part were committed (the events' part
 * is visible first). So the batches still held (`held`) are the ones whose rows may be in the events and
 * not yet in the rollups; the project status leaves them out of what it counts (analytics/project-status.ts).
 *
 * The same object numbers the project's players and sessions (workers/shared/actors.ts), in tables of its
 * own (./actor-numbers.ts): one object per project already, with SQLite storage.
 */
export class BatchClaims extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS claims (batch_key TEXT PRIMARY KEY, holder TEXT NOT NULL, until_ms INTEGER NOT NULL)",
    );
    ctx.storage.sql.exec("CREATE INDEX IF NOT EXISTS claims_until ON claims (until_ms)");
    this.actors = new ActorNumbering(ctx.storage.sql);
  }

  private readonly actors: ActorNumbering;

  /**
   * The numbers of these ids (ActorNumbering.number): the events consumer's call, once per project per
   * INSERT slice before the slice is sent, and the backfill's.
   */
  number(ids: ActorIds, shard: ActorShard = SINGLE_SHARD): ActorNumbers {
    return this.actors.number(ids, shard);
  }

  /** The numbers these ids hold now (null: none), without handing out any. */
  numbersOf(kind: ActorKind, ids: string[]): Array<number | null> {
    return this.actors.numbersOf(kind, ids);
  }

  /** Forgets these players' and sessions' numbers (an erasure); how many went. Idempotent. */
  forget(players: string[], sessions: string[]): { players: number; sessions: number } {
    return this.actors.forget(players, sessions);
  }

  /** Forgets the numbers of ids last seen before `horizonDay` (the retention purge); how many went. */
  expire(horizonDay: number): number {
    return this.actors.expire(horizonDay);
  }

  /** The keys now held by `holder`: free ones, expired ones and its own. Runs as one synchronous step. */
  claim(keys: string[], holder: string, leaseMs: number, nowMs = Date.now()): string[] {
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM claims WHERE until_ms < ?", nowMs);
    const granted: string[] = [];
    for (const key of keys) {
      const [row] = sql
        .exec<{ holder: string }>("SELECT holder FROM claims WHERE batch_key = ?", key)
        .toArray();
      if (row && row.holder !== holder) {
        continue;
      }
      sql.exec(
        "INSERT INTO claims (batch_key, holder, until_ms) VALUES (?, ?, ?) ON CONFLICT (batch_key) DO UPDATE SET until_ms = excluded.until_ms",
        key,
        holder,
        nowMs + leaseMs,
      );
      granted.push(key);
    }
    return granted;
  }

  /** The batch keys claimed now (leases not lapsed), by any holder: the inserts that may be under way. */
  held(nowMs = Date.now()): string[] {
    return this.ctx.storage.sql
      .exec<{ batch_key: string }>("SELECT batch_key FROM claims WHERE until_ms >= ?", nowMs)
      .toArray()
      .map((r) => r.batch_key);
  }

  /** Gives back the holder's claims on these keys (after their rows are in ClickHouse). */
  release(keys: string[], holder: string): void {
    for (const key of keys) {
      this.ctx.storage.sql.exec("DELETE FROM claims WHERE batch_key = ? AND holder = ?", key, holder);
    }
  }
}
