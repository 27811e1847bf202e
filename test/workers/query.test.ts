import { beforeAll, describe, expect, it } from "vitest";
import { TelemetrySource } from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { EVENTS_COLUMNS } from "../../workers/api/query/events-view.js";
import { QUERY_LIMITS, runUserQuery } from "../../workers/api/query/run.js";
import { ApiError } from "../../workers/shared/errors.js";
import { event, MiB, perf } from "../support/batches.js";
import { ingestAndWait, testClickHouse } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import type { OkBody } from "../support/schema.js";

let t: Tenant;
const events = Array.from({ length: 25 }, (_, i) =>
  event(i, {
    eventName: i % 3 ? "frame" : "kill",
    playerId: `p-${i % 4}`,
    metrics: { score: i },
    attributes: { weapon: i % 2 ? "rifle" : "bow" },
    source: i % 5 ? TelemetrySource.PLAYER : TelemetrySource.AUTOMATED,
    ...(i % 2 ? { cameraYaw: 359.5, cameraPitch: -90 } : {}),
    ...(i % 4 ? perf({ fps: 60, memoryUsedBytes: BigInt(i) * MiB, renderThreadMs: 4.25 }) : perf()),
  }),
);

beforeAll(async () => {
  t = await seedTenant("enterprise", "Query Studio");
  await ingestAndWait(t.projectId, t.keys.ingest.key, events);
});

function query(body: Record<string, unknown>) {
  return api(
    "/v1/query",
    { key: t.keys.full.key },
    {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ project_id: t.projectId, ...body }),
    },
  );
}

describe("POST /v1/query", () => {
  it("answers columns with types, rows keyed by name, and statistics; matches the data sent", async () => {
    const res = await query({
      sql: "SELECT event_name, count() AS n, uniqExact(player_id) AS players, sum(metrics['score']) AS score FROM events GROUP BY event_name ORDER BY event_name",
    });
    expect(res.status).toBe(200);
    const { data } = (await res.json()) as OkBody<"/v1/query", "post">;
    expect(data.columns).toEqual([
      { name: "event_name", type: "LowCardinality(String)" },
      { name: "n", type: "UInt64" },
      { name: "players", type: "UInt64" },
      { name: "score", type: "Float64" },
    ]);
    const tally = (name: string) => {
      const mine = events.filter((e) => e.eventName === name);
      return {
        event_name: name,
        n: mine.length,
        players: new Set(mine.map((e) => e.playerId)).size,
        score: mine.reduce((s, e) => s + ((e.metrics as Record<string, number>).score ?? 0), 0),
      };
    };
    expect(data.rows).toEqual([tally("frame"), tally("kill")]);
    expect(data.truncated).toBe(false);
    expect(data.rows_read).toBeGreaterThanOrEqual(events.length);
    expect(data.elapsed_ms).toBeGreaterThanOrEqual(0);
  });

  it("sees every column of the wire contract with its ClickHouse type, maps as maps", async () => {
    const res = await query({ sql: "SELECT * FROM events", limit: 1 });
    const { data } = (await res.json()) as OkBody<"/v1/query", "post">;
    expect(data.columns.map((c) => c.name)).toEqual([...EVENTS_COLUMNS]);
    const type = Object.fromEntries(data.columns.map((c) => [c.name, c.type]));
    expect(type).toMatchObject({
      timestamp: "DateTime64(6, 'UTC')",
      position_x: "Nullable(Float32)",
      fps: "Nullable(Float32)",
      memory_used_bytes: "Nullable(UInt64)",
      memory_mb: "Nullable(Float64)",
      game_thread_ms: "Nullable(Float32)",
      render_thread_ms: "Nullable(Float32)",
      attributes: "Map(String, String)",
      metrics: "Map(String, Float64)",
      source: "Enum8('unspecified' = 0, 'player' = 1, 'automated' = 2)",
      engine_version: "LowCardinality(String)",
      camera_yaw: "Nullable(Float32)",
      camera_pitch: "Nullable(Float32)",
      platform: "LowCardinality(String)",
      memory_total_mb: "UInt32",
      sdk_name: "LowCardinality(String)",
      sdk_version: "LowCardinality(String)",
    });

    const sums = await query({
      sql: `SELECT source, count() AS n, countIf(camera_yaw = 359.5 AND camera_pitch = -90) AS cameras,
              countIf(fps IS NULL) AS no_fps, sum(memory_mb) AS mb, sum(render_thread_ms) AS render,
              countIf(attributes['weapon'] = 'rifle') AS rifles, any(engine_version) AS engine
            FROM events GROUP BY source ORDER BY source`,
    });
    expect(sums.status).toBe(200);
    const tally = (source: TelemetrySource, name: string) => {
      const mine = events.filter((e) => e.source === source);
      return {
        source: name,
        n: mine.length,
        cameras: mine.filter((e) => e.cameraYaw !== undefined).length,
        no_fps: mine.filter((e) => !e.fps).length,
        mb: mine.reduce((s, e) => s + Number(e.memoryUsedBytes ?? 0n) / 1_048_576, 0),
        render: mine.reduce((s, e) => s + (e.renderThreadMs ?? 0), 0),
        rifles: mine.filter((e) => e.attributes?.weapon === "rifle").length,
        engine: "6000.0.23f1",
      };
    };
    expect(((await sums.json()) as OkBody<"/v1/query", "post">).data.rows).toEqual([
      tally(TelemetrySource.PLAYER, "player"),
      tally(TelemetrySource.AUTOMATED, "automated"),
    ]);
  });

  it("limit cuts the rows and says more existed; exactly at the limit it does not", async () => {
    const cut = (
      (await (await query({ sql: "SELECT * FROM events", limit: 10 })).json()) as OkBody<"/v1/query", "post">
    ).data;
    expect(cut.rows).toHaveLength(10);
    expect(cut.rowCount).toBe(10);
    expect(cut.truncated).toBe(true);
    const exact = (
      (await (await query({ sql: "SELECT * FROM events", limit: events.length })).json()) as OkBody<
        "/v1/query",
        "post"
      >
    ).data;
    expect(exact.rows).toHaveLength(events.length);
    expect(exact.rowCount).toBe(events.length);
    expect(exact.truncated).toBe(false);
  });

  it("400 names the field for bad parameters", async () => {
    for (const [body, field] of [
      [{ sql: "SELECT 1", limit: 0 }, "limit"],
      [{ sql: "SELECT 1", limit: 10_001 }, "limit"],
      [{ sql: "" }, "sql"],
      [{ sql: "SELECT 1", project_id: "nope" }, "project_id"],
    ] as const) {
      const res = await query(body);
      expect(res.status).toBe(400);
      expect((await problemOf(res)).detail).toContain(field);
    }
  });

  it("a syntax error names its 1-based position in the caller's text, and quotes only that text", async () => {
    for (const [sql, position, token] of [
      ["SELECT event_name\nFROM events\nWHERE event_name = = 'x'", 50, "="],
      ["SELECT (1", 10, ""],
      // The text is trimmed first (the body's rule): positions count in the trimmed text.
      ["  SELECT 1 +", 11, ""],
    ] as const) {
      const res = await query({ sql });
      expect(res.status, sql).toBe(400);
      const problem = await problemOf(res);
      expect(problem.detail, sql).toMatch(
        new RegExp(`^sql: Syntax error: failed at position ${position}\\b`),
      );
      expect(sql.slice(position - 1, position - 1 + token.length), sql).toBe(token);
      // Neither our wrapper's closing parenthesis nor the client's FORMAT clause is quoted back.
      expect(problem.detail, sql).not.toMatch(/FORMAT|\n\)/);
    }
  });

  it("an execution failure is a 422 with the error envelope", async () => {
    const res = await query({ sql: "SELECT no_such_column FROM events" });
    expect(res.status).toBe(422);
    const problem = await problemOf(res);
    expect(problem.detail).toContain("no_such_column");
    expect(problem.timeout).toBe(false);
  });

  it("a timeout says it was a timeout", async () => {
    const err = await runUserQuery(
      testClickHouse(),
      t.projectId,
      "SELECT count() FROM events ARRAY JOIN range(1000) AS a ARRAY JOIN range(1000) AS b ARRAY JOIN range(1000) AS c",
      10,
      { ...QUERY_LIMITS, maxExecutionSeconds: 1 },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(422);
    expect((err as ApiError).message).toMatch(/^Query failed: timeout: .* 1 s/);
    expect((err as ApiError).extras.extensions?.timeout).toBe(true);
  });

  it("is in the OpenAPI document with the export and erasure routes", async () => {
    const doc = (await (await api("/v1/openapi.json")).json()) as { paths: Record<string, object> };
    for (const path of [
      "/v1/query",
      "/v1/projects/{id}/exports",
      "/v1/projects/{id}/exports/{exportId}",
      "/v1/projects/{id}/exports/{exportId}/download",
      "/v1/projects/{id}/erasures",
      "/v1/projects/{id}/erasures/{erasureId}",
    ]) {
      expect(doc.paths[path], path).toBeDefined();
    }
  });
});
