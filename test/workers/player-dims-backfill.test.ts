import { describe, expect, it } from "vitest";
import migration from "../../schema/clickhouse/migrations/0043_player_dims_all_events.sql?raw";
import { chTime, DAY_MS } from "../../workers/api/window.js";
import { testClickHouse } from "../support/events.js";

/**
 * 0043_player_dims_all_events.sql gives the days stored before it their rows of all event names
 * (event_name '') from their rows of each name. Migrations run on an empty database in the suite, so its
 * backfill is run here on one project's rows: with those rows deleted, it must give back exactly the
 * rows the view wrote at ingest.
 */
async function allNames(projectId: string): Promise<unknown[]> {
  const rs = await testClickHouse().query({
    query: `SELECT day, dim, dim_value, bitmapToArray(groupBitmapMergeState(players)) AS players
      FROM telemetry.player_dims WHERE project_id = {p:UUID} AND event_name = ''
      GROUP BY day, dim, dim_value ORDER BY day, dim, dim_value`,
    query_params: { p: projectId },
    format: "JSONCompact",
  });
  return (await rs.json<unknown[]>()).data;
}

describe("0043's backfill of player_dims' rows of all event names", () => {
  it("gives back the rows the view wrote", async () => {
    const ch = testClickHouse();
    const projectId = crypto.randomUUID();
    const now = Date.parse("2026-06-15T12:00:00.000Z");
    const names = ["match_start", "frame_sample", "level_up"];
    const maps = ["dust", "harbor", ""];
    await ch.insert({
      table: "telemetry.events",
      format: "JSONEachRow",
      values: Array.from({ length: 120 }, (_, i) => ({
        project_id: projectId,
        timestamp: chTime(now - (i % 3) * DAY_MS - i * 1000),
        received_at: chTime(now).slice(0, 23),
        event_name: names[i % 3],
        session_id: `s-${i % 17}`,
        player_id: `p-${i % 13}`,
        map_id: maps[i % 5 === 0 ? 2 : i % 2],
        platform: i % 4 === 0 ? "ps5" : "windows",
        build_id: `1.${i % 2}`,
        batch_id: "dims",
        event_index: i,
        player_idx: 1 + (i % 13),
        session_idx: 1 + (i % 17),
      })),
    });
    const written = await allNames(projectId);
    // Three days × (3 maps + 2 platforms + 2 builds), each with its players.
    expect(written).toHaveLength(21);

    await ch.command({
      query: "DELETE FROM telemetry.player_dims WHERE project_id = {p:UUID} AND event_name = ''",
      query_params: { p: projectId },
    });
    expect(await allNames(projectId)).toEqual([]);

    const backfill = migration
      .slice(migration.lastIndexOf("INSERT INTO telemetry.player_dims"))
      .trim()
      .replace(/;$/, "");
    // This project's rows only: the other test files' projects are theirs.
    const own = backfill.replace("WHERE dim != ''", "WHERE project_id = {p:UUID} AND dim != ''");
    expect(own).not.toBe(backfill);
    await ch.command({ query: own, query_params: { p: projectId } });
    expect(await allNames(projectId)).toEqual(written);
  });
});
