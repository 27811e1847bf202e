// Alert rules for the benchmarks (bench:analytics, bench:alerts): maps, threshold profiles and rules
// over the generated data (analytics-data.ts), written straight to Postgres.
import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import {
  alertRuleChannels,
  alertRuleProfiles,
  alertRules,
  maps,
  thresholdProfiles,
} from "../../schema/pg/schema.js";
import { METRIC_KEYS } from "../../workers/shared/telemetry/metrics.js";

const BENCH_MAPS = ["maps/desert_outpost", "maps/frozen_harbor", "maps/old_town"];

export type SeedOptions = {
  /** Channels every rule notifies (none by default: delivery is not what bench:analytics times). */
  channelIds?: string[];
  /** The i-th rule's fail percentage; by default 10, 20 … 50 in turn. */
  failPercentage?: (i: number) => number;
};

/**
 * `count` active rules over the bench maps, each with two of ten threshold profiles (device filters of
 * the generated data, some open); the rules already there are deactivated. Metrics, levels, windows
 * (1, 7, 14, 30 days) and fail percentages vary by rule; cell sizes cycle through `cellSizes`.
 * Answers the new rules' ids.
 */
export async function seedAlertRules(
  databaseUrl: string,
  projectId: string,
  count: number,
  cellSizes: readonly number[],
  opts: SeedOptions = {},
): Promise<string[]> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const db = drizzle({ client: pool });
    await db.update(alertRules).set({ isActive: false }).where(eq(alertRules.projectId, projectId));
    let mapRows = await db.select().from(maps).where(eq(maps.projectId, projectId));
    if (!mapRows.length) {
      mapRows = await db
        .insert(maps)
        .values(
          BENCH_MAPS.map((mapId) => ({
            projectId,
            mapId,
            name: mapId,
            imageKey: `bench/${mapId}`,
            imageContentType: "image/png",
            imageWidth: 1024,
            imageHeight: 1024,
            worldMinX: -500,
            worldMinY: -500,
            worldMaxX: 500,
            worldMaxY: 500,
          })),
        )
        .returning();
    }
    let profiles = await db
      .select()
      .from(thresholdProfiles)
      .where(eq(thresholdProfiles.projectId, projectId));
    if (!profiles.length) {
      const platforms = [null, "windows", "ps5", "xbox", "switch"];
      const resolutions = [null, "1920x1080", "2560x1440"];
      const gpus = [null, "RTX 3060", "RTX 4070", "RX 6700"];
      profiles = await db
        .insert(thresholdProfiles)
        .values(
          Array.from({ length: 10 }, (_, i) => ({
            projectId,
            name: `bench profile ${i}`,
            platform: platforms[i % platforms.length] ?? null,
            resolution: resolutions[i % resolutions.length] ?? null,
            gpu: gpus[i % gpus.length] ?? null,
            fpsGood: 60 + i,
            fpsWarn: 30 + i,
            frameTimeGood: 16 + i,
            frameTimeWarn: 33 + i,
            memoryGood: 3000 + 100 * i,
            memoryWarn: 5000 + 100 * i,
            gpuTimeGood: 8 + i,
            gpuTimeWarn: 16 + i,
          })),
        )
        .returning();
    }
    const windows = [1, 7, 14, 30];
    const failPercentage = opts.failPercentage ?? ((i: number) => 10 + (i % 5) * 10);
    const rules = await db
      .insert(alertRules)
      .values(
        Array.from({ length: count }, (_, i) => ({
          projectId,
          name: `bench rule ${i}`,
          mapId: (mapRows[i % mapRows.length] as (typeof mapRows)[number]).id,
          metric: METRIC_KEYS[i % METRIC_KEYS.length] ?? "fps",
          thresholdLevel: Math.floor(i / 4) % 2 ? ("good" as const) : ("warn" as const),
          failPercentage: failPercentage(i),
          evaluationDays: windows[Math.floor(i / 8) % windows.length] as number,
          cellSize: cellSizes[Math.floor(i / 3) % cellSizes.length] as number,
          cooldownMinutes: 60,
        })),
      )
      .returning({ id: alertRules.id });
    await db.insert(alertRuleProfiles).values(
      rules.flatMap((r, i) => [
        {
          alertRuleId: r.id,
          thresholdProfileId: (profiles[i % 10] as (typeof profiles)[number]).id,
          ordinal: 0,
        },
        {
          alertRuleId: r.id,
          thresholdProfileId: (profiles[(i + 3) % 10] as (typeof profiles)[number]).id,
          ordinal: 1,
        },
      ]),
    );
    const channelIds = opts.channelIds ?? [];
    if (channelIds.length) {
      await db
        .insert(alertRuleChannels)
        .values(rules.flatMap((r) => channelIds.map((channelId) => ({ alertRuleId: r.id, channelId }))));
    }
    return rules.map((r) => r.id);
  } finally {
    await pool.end();
  }
}

/** Evaluation events recorded for the project: each pair records its first status on its first run. */
export async function evaluationEvents(databaseUrl: string, projectId: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const rs = await pool.query(
      "SELECT count(*)::int AS n FROM alert_evaluation_events WHERE project_id = $1",
      [projectId],
    );
    return Number(rs.rows[0]?.n ?? 0);
  } finally {
    await pool.end();
  }
}
