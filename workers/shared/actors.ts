/**
 * Dense numbers of a project's players and sessions (docs/ingest.md, "Dense numbers"). Every distinct
 * effective player (telemetry.events.player: player_id, or session_id when player_id is empty) and every
 * distinct session_id of a project gets a UInt32, assigned by the project's BatchClaims object
 * (durable-objects/batch-claims.ts) the first time the events consumer delivers it, and written on every
 * event row as player_idx and session_idx. Numbers start at 1 (0 in a row: not numbered yet, i.e. a row
 * stored before numbering, which the backfill numbers), are never reused while the object holds the id,
 * and are stable: the mapping is by id string, so a redelivered batch gets the same numbers.
 *
 * Shards: one object holds the mapping of a project (SQLite, ~105 bytes per 36-character id with its
 * index: 10M players and 40M sessions in ~5 GB, under an object's 10 GB). A project too big for one object is split by id hash into K objects; shard k of K
 * hands out k + 1, k + 1 + K, k + 1 + 2K, …, so the numbers stay disjoint and dense to within K.
 */

/** The two kinds of numbered ids. */
export const ACTOR_KINDS = ["player", "session"] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

/** Ids of one delivery (or one backfill page) to number, in the order their numbers are handed out. */
export type ActorIds = {
  players: string[];
  /** Per player: the UTC day (days since the epoch) of its latest event here. */
  playerDays: number[];
  sessions: string[];
  sessionDays: number[];
};

/** The numbers of ActorIds, position for position. */
export type ActorNumbers = { players: number[]; sessions: number[] };

/** Which numbers an object hands out: shard `shard` of `shards` (1 + shard + shards · n). */
export type ActorShard = { shard: number; shards: number };

/** One object per project holds the whole mapping (see above for more). */
export const SINGLE_SHARD: ActorShard = { shard: 0, shards: 1 };

/** The shard of an id among `shards` (FNV-1a of its UTF-16 units): stable for a given shard count. */
export function actorShardOf(id: string, shards: number): number {
  if (shards <= 1) {
    return 0;
  }
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  }
  return (h >>> 0) % shards;
}

/** µs since the epoch → UTC day number. */
export const dayOfUs = (us: number): number => Math.floor(us / 86_400_000_000);

/** A YYYY-MM-DD date → UTC day number. */
export const dayOfDate = (date: string): number => Math.floor(Date.parse(`${date}T00:00:00Z`) / 86_400_000);
