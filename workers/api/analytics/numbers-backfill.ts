// The backfill of dense numbers (workers/shared/actors.ts) for events stored before numbering existed
// (player_idx / session_idx 0, schema/clickhouse/migrations/0023_actor_numbers.sql). It runs in the API
// Worker, because the mapping lives in each project's BatchClaims object: an operator asks for it
// (POST /api/operator/number-backfills, routes/operator/index.ts), which sends one jobs-queue message
// per project (jobs.ts NumbersBackfillJob); the consumer numbers one page and, while there is more,
// sends the next message for the project. So no invocation does more than one page of one project.
import type { ClickHouseClient } from "@clickhouse/client-web";
import type { ActorKind } from "../../shared/actors.js";
import { CH_EVENTS, CH_FUNNEL_EVENTS, CH_SESSION_VALUES, openClickHouse } from "../../shared/clickhouse.js";
import { configOf } from "../../shared/config.js";
import { BITMAP_ROLLUPS, rebuildRollups } from "../erasure/rollups.js";

/**
 * Ids per kind per page: one object call of at most 2 × this many ids, one read of the project's
 * unnumbered rows and one mutation (its text ~2 MB at UUID-sized ids) that rewrites the two columns of
 * the parts holding this page's rows.
 */
export const BACKFILL_PAGE = 5_000;

/** A mutation rewrites parts: minutes on a large project. */
const STATEMENT_TIMEOUT_MS = 600_000;

type Page = { ids: string[]; days: number[]; dates: string[] };

/**
 * The next unnumbered ids of a kind, by their first event (then by id), with the UTC day of their latest
 * unnumbered event: the order ingest would have met them in, had every event gone through it in time
 * order.
 */
async function firstSeen(
  ch: ClickHouseClient,
  project: string,
  kind: ActorKind,
  page: number,
): Promise<Page> {
  const [column, idx] = kind === "player" ? ["player", "player_idx"] : ["session_id", "session_idx"];
  const rs = await ch.query({
    query: `
      SELECT ${column} AS id, dateDiff('day', toDate('1970-01-01'), toDate(max(timestamp))) AS day,
        arrayMap(d -> toString(d), groupUniqArray(toDate(timestamp))) AS dates
      FROM ${CH_EVENTS}
      WHERE project_id = {project:UUID} AND ${idx} = 0
      GROUP BY id
      ORDER BY min(timestamp), id
      LIMIT {page:UInt32}`,
    query_params: { project, page },
    format: "JSONCompactEachRow",
  });
  const rows = await rs.json<[string, number | string, string[]]>();
  return {
    ids: rows.map((r) => r[0]),
    days: rows.map((r) => Number(r[1])),
    dates: [...new Set(rows.flatMap((r) => r[2]))],
  };
}

export type BackfillPage = { players: number; sessions: number; more: boolean };

const HEX = new TextEncoder();

/**
 * A constant array of the ids in the statement's text, each as unhex('…') of its UTF-8 bytes: nothing
 * of an id can end the literal, whatever it holds.
 */
function ids(list: string[]): string {
  const hex = list.map((id) => {
    let out = "";
    for (const byte of HEX.encode(id)) {
      out += byte.toString(16).padStart(2, "0");
    }
    return `'${out}'`;
  });
  return `arrayMap(x -> unhex(x), [${hex.join(",")}]::Array(String))`;
}

/** A constant Array(UInt32) of the numbers. */
function numbers(list: number[]): string {
  return `[${list.map((n) => String(Math.trunc(n))).join(",")}]::Array(UInt32)`;
}

/**
 * Numbers one page of the project's unnumbered players and sessions: reads them in first-seen order,
 * has the project's object number them (an id it already knows, say a player who came back after
 * numbering began, keeps its number; a new one gets the next), and writes the numbers onto the rows
 * that lack them, in one synchronous mutation (and onto their funnel events, by hash), then rebuilds the bitmaps (0024_actor_bitmaps.sql, 0027_actor_buckets.sql) of the
 * days those rows are on. `more`: a page was full, so another may follow. A repeat
 * (a redelivered message) finds the same ids or none and writes the same numbers: idempotent.
 */
export async function backfillNumbersPage(
  env: Env,
  project: string,
  page = BACKFILL_PAGE,
): Promise<BackfillPage> {
  const ch = openClickHouse(configOf(env), STATEMENT_TIMEOUT_MS);
  const [players, sessions] = await Promise.all([
    firstSeen(ch, project, "player", page),
    firstSeen(ch, project, "session", page),
  ]);
  if (!players.ids.length && !sessions.ids.length) {
    return { players: 0, sessions: 0, more: false };
  }
  const answer = await env.BATCH_CLAIMS.get(env.BATCH_CLAIMS.idFromName(project)).number({
    players: players.ids,
    playerDays: players.days,
    sessions: sessions.ids,
    sessionDays: sessions.days,
  });
  await ch.command({
    query: `
      ALTER TABLE ${CH_EVENTS}
      UPDATE
        player_idx = if(player_idx = 0, transform(player, ${ids(players.ids)}, ${numbers(answer.players)}, toUInt32(0)), player_idx),
        session_idx = if(session_idx = 0, transform(session_id, ${ids(sessions.ids)}, ${numbers(answer.sessions)}, toUInt32(0)), session_idx)
      WHERE project_id = {project:UUID}
        AND ((player_idx = 0 AND transform(player, ${ids(players.ids)}, ${numbers(answer.players)}, toUInt32(0)) != 0)
          OR (session_idx = 0 AND transform(session_id, ${ids(sessions.ids)}, ${numbers(answer.sessions)}, toUInt32(0)) != 0))`,
    query_params: { project },
    // The page is in the statement's text (the request body), not in URL parameters: a page's ids are
    // far more than a URL may carry.
    clickhouse_settings: { mutations_sync: "2", max_query_size: "16000000" },
  });
  // Their funnel events (0029_funnel_anchors.sql) hold the player's hash: the same numbers, by hash.
  if (players.ids.length) {
    const byHash = `transform(player_hash, arrayMap(x -> cityHash64(x), ${ids(players.ids)}), ${numbers(answer.players)}, toUInt32(0))`;
    await ch.command({
      query: `
        ALTER TABLE ${CH_FUNNEL_EVENTS}
        UPDATE player_idx = ${byHash}
        WHERE project_id = {project:UUID} AND player_idx = 0 AND ${byHash} != 0`,
      query_params: { project },
      clickhouse_settings: { mutations_sync: "2", max_query_size: "16000000" },
    });
  }
  // The bitmaps of the days holding the rows just numbered (their views skipped number 0), rebuilt from
  // the events: a bitmap is a set, so rows numbered by a concurrent delivery are not counted twice.
  const days = [...new Set([...players.dates, ...sessions.dates])].sort();
  // session_values too: its rows carry the session numbers (0030_session_medians.sql).
  await rebuildRollups(ch, { project, player: "", identified: [], days }, [
    ...BITMAP_ROLLUPS,
    CH_SESSION_VALUES,
  ]);
  return {
    players: players.ids.length,
    sessions: sessions.ids.length,
    more: players.ids.length === page || sessions.ids.length === page,
  };
}
