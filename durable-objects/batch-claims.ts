import { DurableObject } from "cloudflare:workers";
import {
  ACTOR_KINDS,
  type ActorIds,
  type ActorKind,
  type ActorNumbers,
  type ActorShard,
  SINGLE_SHARD,
} from "../workers/shared/actors.js";

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
 * The same object numbers the project's players and sessions (workers/shared/actors.ts), in the same
 * call as the claim (`claimAndNumber`): table `actors` maps (kind, id) to its number and the UTC day of
 * its latest event, `actor_next` holds the next number of each kind, which only grows, so a number is
 * never handed out twice, even after its id was forgotten (an erasure) or expired (retention).
 */
export class BatchClaims extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS claims (batch_key TEXT PRIMARY KEY, holder TEXT NOT NULL, until_ms INTEGER NOT NULL)",
    );
    ctx.storage.sql.exec("CREATE INDEX IF NOT EXISTS claims_until ON claims (until_ms)");
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS actors (kind INTEGER NOT NULL, id TEXT NOT NULL, idx INTEGER NOT NULL, last_day INTEGER NOT NULL, PRIMARY KEY (kind, id)) WITHOUT ROWID",
    );
    ctx.storage.sql.exec("CREATE INDEX IF NOT EXISTS actors_last_day ON actors (last_day)");
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS actor_next (kind INTEGER PRIMARY KEY, n INTEGER NOT NULL)",
    );
  }

  /**
   * `claim`, and the numbers of the delivery's players and sessions (`number`), in one synchronous step.
   * Every id is numbered, also those of batches another delivery holds: their numbers are the same
   * whoever asks first.
   */
  claimAndNumber(
    keys: string[],
    holder: string,
    leaseMs: number,
    ids: ActorIds,
    nowMs = Date.now(),
  ): { granted: string[]; numbers: ActorNumbers } {
    return { granted: this.claim(keys, holder, leaseMs, nowMs), numbers: this.number(ids) };
  }

  /**
   * The numbers of these ids: the one each already has, else the next free one, handed out in the order
   * given (the consumer's first-seen order; the backfill's first event). Each id's latest day moves
   * forward to the day given. Ids must be distinct within a kind. Shard: which numbers this object hands
   * out (workers/shared/actors.ts); the same for every call to one object.
   */
  number(ids: ActorIds, shard: ActorShard = SINGLE_SHARD): ActorNumbers {
    return {
      players: this.numberKind("player", ids.players, ids.playerDays, shard),
      sessions: this.numberKind("session", ids.sessions, ids.sessionDays, shard),
    };
  }

  private numberKind(kind: ActorKind, ids: string[], days: number[], shard: ActorShard): number[] {
    if (!ids.length) {
      return [];
    }
    const sql = this.ctx.storage.sql;
    const k = ACTOR_KINDS.indexOf(kind);
    const known = new Map<string, { idx: number; last: number }>();
    for (const r of sql.exec<{ id: string; idx: number; last_day: number }>(
      "SELECT a.id, a.idx, a.last_day FROM json_each(?) j JOIN actors a ON a.kind = ? AND a.id = j.value",
      JSON.stringify(ids),
      k,
    )) {
      known.set(r.id, { idx: r.idx, last: r.last_day });
    }
    const [counter] = sql.exec<{ n: number }>("SELECT n FROM actor_next WHERE kind = ?", k).toArray();
    let n = counter?.n ?? 0;
    const out: number[] = new Array(ids.length);
    const fresh: Array<[string, number, number]> = [];
    const later: Array<[string, number]> = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i] as string;
      const day = days[i] ?? 0;
      const had = known.get(id);
      if (had) {
        out[i] = had.idx;
        if (day > had.last) {
          later.push([id, day]);
        }
        continue;
      }
      const idx = 1 + shard.shard + shard.shards * n++;
      if (idx > 0xffffffff) {
        throw new Error(`${kind} numbers exhausted (UInt32)`);
      }
      out[i] = idx;
      fresh.push([id, idx, day]);
      known.set(id, { idx, last: day });
    }
    if (fresh.length) {
      sql.exec(
        `INSERT INTO actors (kind, id, idx, last_day)
         SELECT ?, json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?)`,
        k,
        JSON.stringify(fresh),
      );
      sql.exec(
        "INSERT INTO actor_next (kind, n) VALUES (?, ?) ON CONFLICT (kind) DO UPDATE SET n = excluded.n",
        k,
        n,
      );
    }
    if (later.length) {
      sql.exec(
        `UPDATE actors SET last_day = max(last_day, json_extract(j.value, '$[1]'))
         FROM json_each(?) j WHERE actors.kind = ? AND actors.id = json_extract(j.value, '$[0]')`,
        JSON.stringify(later),
        k,
      );
    }
    return out;
  }

  /** The numbers these ids hold now (null: none), without handing out any. */
  numbersOf(kind: ActorKind, ids: string[]): Array<number | null> {
    const k = ACTOR_KINDS.indexOf(kind);
    const found = new Map<string, number>();
    for (const r of this.ctx.storage.sql.exec<{ id: string; idx: number }>(
      "SELECT a.id, a.idx FROM json_each(?) j JOIN actors a ON a.kind = ? AND a.id = j.value",
      JSON.stringify(ids),
      k,
    )) {
      found.set(r.id, r.idx);
    }
    return ids.map((id) => found.get(id) ?? null);
  }

  /**
   * Forgets these players' and sessions' numbers (an erasure): an id that comes back gets a new number.
   * Returns how many mappings went. Idempotent.
   */
  forget(players: string[], sessions: string[]): { players: number; sessions: number } {
    const sql = this.ctx.storage.sql;
    const drop = (kind: ActorKind, ids: string[]) =>
      ids.length
        ? sql
            .exec(
              "DELETE FROM actors WHERE kind = ? AND id IN (SELECT value FROM json_each(?)) RETURNING 1",
              ACTOR_KINDS.indexOf(kind),
              JSON.stringify(ids),
            )
            .toArray().length
        : 0;
    return { players: drop("player", players), sessions: drop("session", sessions) };
  }

  /**
   * Forgets the numbers of ids whose latest event is before `horizonDay` (UTC day number): the
   * retention purge (workers/api/data-retention/purge.ts), whose events are gone with them. Returns how
   * many mappings went.
   */
  expire(horizonDay: number): number {
    return this.ctx.storage.sql
      .exec("DELETE FROM actors WHERE last_day < ? RETURNING 1", horizonDay)
      .toArray().length;
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
