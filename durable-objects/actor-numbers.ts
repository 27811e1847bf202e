import {
  ACTOR_KINDS,
  type ActorIds,
  type ActorKind,
  type ActorNumbers,
  type ActorShard,
  SINGLE_SHARD,
} from "../workers/shared/actors.js";

/** A value SQLite binds or returns. */
type SqlValue = string | number | null | ArrayBuffer;

/**
 * What the numbering needs of SQLite: a Durable Object's `ctx.storage.sql`, or (in the bench,
 * scripts/bench/numbering.ts) node:sqlite behind the same shape.
 */
export interface ActorSql {
  exec<T extends Record<string, SqlValue>>(query: string, ...bindings: SqlValue[]): { toArray(): T[] };
}

/**
 * The dense numbers of one project's players and sessions (workers/shared/actors.ts), in the SQLite of
 * the project's BatchClaims object: table `actors` maps (kind, id) to its number and the UTC day of its
 * latest event; `actor_next` holds the count of numbers handed out per kind, which only grows, so a
 * number is never handed out twice, even after its id was forgotten (an erasure) or expired (retention).
 * Every method is one synchronous step of the object (no await): no call sees another half done.
 */
export class ActorNumbering {
  constructor(private readonly sql: ActorSql) {
    sql.exec(
      "CREATE TABLE IF NOT EXISTS actors (kind INTEGER NOT NULL, id TEXT NOT NULL, idx INTEGER NOT NULL, last_day INTEGER NOT NULL, PRIMARY KEY (kind, id)) WITHOUT ROWID",
    );
    sql.exec("CREATE INDEX IF NOT EXISTS actors_last_day ON actors (last_day)");
    sql.exec("CREATE TABLE IF NOT EXISTS actor_next (kind INTEGER PRIMARY KEY, n INTEGER NOT NULL)");
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
    const sql = this.sql;
    const k = ACTOR_KINDS.indexOf(kind);
    const known = new Map<string, { idx: number; last: number }>();
    for (const r of sql
      .exec<{ id: string; idx: number; last_day: number }>(
        // IN, not a join with json_each: SQLite would scan the kind's whole table per id.
        "SELECT id, idx, last_day FROM actors WHERE kind = ? AND id IN (SELECT value FROM json_each(?))",
        k,
        JSON.stringify(ids),
      )
      .toArray()) {
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
    // By day (a delivery's events span a day or two): one indexed UPDATE per day.
    const byDay = new Map<number, string[]>();
    for (const [id, day] of later) {
      const list = byDay.get(day);
      if (list) {
        list.push(id);
      } else {
        byDay.set(day, [id]);
      }
    }
    for (const [day, list] of byDay) {
      sql.exec(
        "UPDATE actors SET last_day = ? WHERE kind = ? AND last_day < ? AND id IN (SELECT value FROM json_each(?))",
        day,
        k,
        day,
        JSON.stringify(list),
      );
    }
    return out;
  }

  /** The numbers these ids hold now (null: none), without handing out any. */
  numbersOf(kind: ActorKind, ids: string[]): Array<number | null> {
    const k = ACTOR_KINDS.indexOf(kind);
    const found = new Map<string, number>();
    for (const r of this.sql
      .exec<{ id: string; idx: number }>(
        "SELECT id, idx FROM actors WHERE kind = ? AND id IN (SELECT value FROM json_each(?))",
        k,
        JSON.stringify(ids),
      )
      .toArray()) {
      found.set(r.id, r.idx);
    }
    return ids.map((id) => found.get(id) ?? null);
  }

  /**
   * Forgets these players' and sessions' numbers (an erasure): an id that comes back gets a new number.
   * Returns how many mappings went. Idempotent.
   */
  forget(players: string[], sessions: string[]): { players: number; sessions: number } {
    const sql = this.sql;
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
    return this.sql.exec("DELETE FROM actors WHERE last_day < ? RETURNING 1", horizonDay).toArray().length;
  }
}
