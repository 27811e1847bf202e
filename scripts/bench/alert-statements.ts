// The alert evaluation's ClickHouse statements, attributed (bench:analytics, BENCH_ALERTS_ONLY=1): one
// scheduled run's messages, as the cron plans them, judged from Node with the consumer's own function
// (judgeScopeGroup, per message and map, as evaluate.ts calls it), each statement kept with its kind,
// its time and the rows the primary keys leave it to read (EXPLAIN ESTIMATE: independent of the load).
import type { ClickHouseClient } from "@clickhouse/client-web";
import { eq, inArray } from "drizzle-orm";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { alertRuleProfiles, alertRules, maps, thresholdProfiles } from "../../schema/pg/schema.js";
import { type CellJudgement, judgeScopeGroup, type PairQuery } from "../../workers/api/alerts/cells.js";
import { thresholdOf } from "../../workers/api/alerts/metrics.js";
import { planMessages } from "../../workers/api/alerts/plan.js";
import type { Db } from "../../workers/api/db.js";
import { windowOf } from "../../workers/api/window.js";

export type StatementFigures = { kind: string; statements: number; ms: number; rows: number };

function kindOf(sql: string): string {
  if (sql.includes("alert_cells")) {
    return "means (alert_cells)";
  }
  if (sql.includes("INNER JOIN")) {
    return "failing shares (cell_samples)";
  }
  if (sql.includes("LIMIT 1")) {
    return "device_info look-up";
  }
  return "means (cell_samples)";
}

/**
 * Judges the project's active pairs of a run at `runAt` message by message, as the consumer would on
 * the cron's first run (every triggered pair's shares read), and answers per statement kind: count,
 * summed milliseconds and rows the keys leave to read; plus the messages' count.
 */
export async function alertStatements(
  databaseUrl: string,
  ch: ClickHouseClient,
  projectId: string,
  runAt: number,
): Promise<{ messages: number; figures: StatementFigures[] }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const seen: Array<{ kind: string; ms: number; params: Parameters<ClickHouseClient["query"]>[0] }> = [];
  const client = new Proxy(ch, {
    get(target, prop, receiver) {
      if (prop === "query") {
        return async (params: Parameters<ClickHouseClient["query"]>[0]) => {
          const started = performance.now();
          const rs = await target.query(params);
          const rows = await rs.json();
          seen.push({ kind: kindOf(params.query), ms: performance.now() - started, params });
          // selectRows reads the result as JSON: answer the rows already read.
          return { ...rs, json: async () => rows };
        };
      }
      return Reflect.get(target, prop, receiver);
    },
  });
  try {
    const db = drizzle({ client: pool });
    const { messages } = await planMessages(db as unknown as Db, runAt);
    const mine = messages.filter((m) => m.projectId === projectId);
    for (const m of mine) {
      const ruleIds = [...new Set(m.pairs.map(([r]) => r))];
      const rules = await db
        .select({ rule: alertRules, mapId: maps.mapId })
        .from(alertRules)
        .innerJoin(maps, eq(maps.id, alertRules.mapId))
        .where(inArray(alertRules.id, ruleIds));
      const profiles = await db
        .select({ ruleId: alertRuleProfiles.alertRuleId, profile: thresholdProfiles })
        .from(alertRuleProfiles)
        .innerJoin(thresholdProfiles, eq(thresholdProfiles.id, alertRuleProfiles.thresholdProfileId))
        .where(inArray(alertRuleProfiles.alertRuleId, ruleIds));
      const byMap = new Map<string, Array<PairQuery & { failPercentage: number }>>();
      for (const [ruleId, profileId] of m.pairs) {
        const r = rules.find((x) => x.rule.id === ruleId);
        const p = profiles.find((x) => x.ruleId === ruleId && x.profile.id === profileId)?.profile;
        const threshold = r && p ? thresholdOf(p, r.rule.metric, r.rule.thresholdLevel) : null;
        if (!r || !p || threshold === null) {
          continue;
        }
        const list = byMap.get(r.mapId) ?? [];
        byMap.set(r.mapId, list);
        list.push({
          key: `${ruleId}:${profileId}`,
          projectId,
          mapId: r.mapId,
          window: windowOf(r.rule.evaluationDays, runAt),
          cellSize: r.rule.cellSize,
          filters: {
            platform: p.platform,
            resolution: p.resolution,
            buildConfig: p.buildConfig,
            gpu: p.gpu,
            storage: p.storage,
          },
          metric: r.rule.metric,
          threshold,
          failPercentage: r.rule.failPercentage,
        });
      }
      await Promise.all(
        [...byMap.values()].map(
          (pairs): Promise<Map<string, CellJudgement>> =>
            judgeScopeGroup(
              client,
              pairs,
              (p, c) => (c.totalCount ? (c.failCount / c.totalCount) * 100 : 0) > p.failPercentage,
            ),
        ),
      );
    }
    const figures = new Map<string, StatementFigures>();
    for (const s of seen) {
      const rs = await ch.query({
        ...s.params,
        query: `EXPLAIN ESTIMATE ${s.params.query}`,
        format: "JSONEachRow",
      });
      let rows = 0;
      for (const r of await rs.json<{ rows: string | number }>()) {
        rows += Number(r.rows);
      }
      const f = figures.get(s.kind) ?? { kind: s.kind, statements: 0, ms: 0, rows: 0 };
      figures.set(s.kind, f);
      f.statements++;
      f.ms += Math.round(s.ms);
      f.rows += rows;
    }
    return { messages: mine.length, figures: [...figures.values()] };
  } finally {
    await pool.end();
  }
}
