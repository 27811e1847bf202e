import { describe, expect, it } from "vitest";
import { REBUILT_ROLLUPS, REPLAYED_ROLLUPS } from "../../workers/api/erasure/rollups.js";
import { CH_DB, CH_EVENTS, CH_EVENTS_REPLAY } from "../../workers/shared/clickhouse.js";
import { testClickHouse } from "../support/events.js";

/**
 * The replay views (0032_rollup_replay.sql) must fill each rollup exactly as its ingest view does: each
 * `X_replay_mv` is `X_mv` reading `events_replay` (filtered to the replays naming X) instead of the
 * events, and `events_replay` has the events' columns. A change to one side alone fails here. That the
 * rows they produce equal a fresh build is held by erasure-analytics.test.ts, whose rebuild goes through
 * them.
 */
async function rows<T>(query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  const rs = await testClickHouse().query({ query, query_params: params, format: "JSONEachRow" });
  return rs.json<T>();
}

const name = (table: string) => table.slice(`${CH_DB}.`.length);

async function createQuery(view: string): Promise<string> {
  const [row] = await rows<{ q: string }>(
    "SELECT create_table_query AS q FROM system.tables WHERE database = {db:String} AND name = {view:String}",
    { db: CH_DB, view },
  );
  if (!row) {
    throw new Error(`${CH_DB}.${view} does not exist`);
  }
  return row.q;
}

describe("rollup replay views", () => {
  it.each(REPLAYED_ROLLUPS.map(name))(
    "%s: the replay view is the ingest view reading events_replay",
    async (table) => {
      const ingest = await createQuery(`${table}_mv`);
      const replay = await createQuery(`${table}_replay_mv`);
      const expected = ingest
        .replace(`VIEW ${CH_DB}.${table}_mv TO`, `VIEW ${CH_DB}.${table}_replay_mv TO`)
        .replaceAll(
          `FROM ${CH_EVENTS} `,
          `FROM (SELECT * FROM ${CH_EVENTS_REPLAY} WHERE has(replay_targets, '${table}')) `,
        )
        .replaceAll(
          `FROM ${CH_EVENTS})`,
          `FROM (SELECT * FROM ${CH_EVENTS_REPLAY} WHERE has(replay_targets, '${table}')))`,
        );
      expect(ingest).toContain(`FROM ${CH_EVENTS}`);
      expect(replay).toBe(expected);
    },
  );

  it("only the replay views read events_replay, and every other rebuilt rollup has a _src view", async () => {
    const [replay] = await rows<{ readers: string[] }>(
      "SELECT dependencies_table AS readers FROM system.tables WHERE database = {db:String} AND name = 'events_replay'",
      { db: CH_DB },
    );
    expect([...(replay?.readers ?? [])].sort()).toEqual(
      REPLAYED_ROLLUPS.map((t) => `${name(t)}_replay_mv`).sort(),
    );
    for (const table of REBUILT_ROLLUPS.filter((t) => !REPLAYED_ROLLUPS.includes(t))) {
      expect(await createQuery(`${name(table)}_src`)).toContain("CREATE VIEW");
    }
  });

  it("events_replay has the events' columns, then replay_targets", async () => {
    const columns = (table: string) =>
      rows<{ name: string; type: string; default_kind: string; default_expression: string }>(
        `SELECT name, type, default_kind, default_expression FROM system.columns
          WHERE database = {db:String} AND table = {table:String} ORDER BY position`,
        { db: CH_DB, table },
      );
    const events = await columns("events");
    const replay = await columns("events_replay");
    expect(replay.slice(0, -1)).toEqual(events);
    expect(replay.at(-1)).toMatchObject({ name: "replay_targets", type: "Array(LowCardinality(String))" });
  });
});
