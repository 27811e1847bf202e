import type { ClickHouseClient } from "@clickhouse/client-web";
import { asc, eq, inArray } from "drizzle-orm";
import type { WorstCellsRecord } from "../../../schema/pg/columns.js";
import {
  type AlertRuleRow,
  alertEvaluationEvents,
  alertRuleChannels,
  alertRuleProfiles,
  alertRules,
  maps,
  type ThresholdProfileRow,
  thresholdProfiles,
} from "../../../schema/pg/schema.js";
import { openClickHouse } from "../../shared/clickhouse.js";
import { configOf } from "../../shared/config.js";
import { type Db, openDb } from "../db.js";
import { windowOf } from "../window.js";
import { type CellJudgement, judgeScopeGroup, type PairQuery } from "./cells.js";
import { type AlertStatus, type LatestStatus, latestStatuses } from "./latest.js";
import { linked } from "./links.js";
import { thresholdOf } from "./metrics.js";
import type { AlertNotification, NotificationMessage } from "./notification.js";

/** Rules evaluated at once: bounds the load on ClickHouse and Postgres of one cron run. */
const CONCURRENCY = 4;

type Profile = ThresholdProfileRow;
type Rule = AlertRuleRow & {
  map: { id: string; mapId: string; name: string };
  profiles: Profile[];
  channelIds: string[];
};

export type RunSummary = {
  rules: number;
  evaluated: number;
  changed: number;
  notified: number;
  failed: number;
  /** Wall time of the run. */
  ms: number;
};

type Run = {
  env: Env;
  /** The app's public origin for the notifications' links (APP_URL; empty: root-relative). */
  origin: string;
  db: Db;
  ch: ClickHouseClient;
  now: Date;
  latest: Map<string, LatestStatus>;
  summary: RunSummary;
  /** The run's active rules. */
  rules: Rule[];
  /**
   * Judgements by (project, map), made once per run for all of its pairs (judgeScopeGroup: one read
   * per window and cell size for the means, one per window for the failing shares).
   */
  judged: Map<string, Promise<Map<string, CellJudgement>>>;
};

/**
 * One cron run: every active rule, every profile of its bundle independently. A (rule, profile)
 * records an event only when its status changes (the first evaluation included); a change to
 * triggered notifies the rule's channels unless that pair's cooldown holds. A pair that fails is
 * logged and skipped; the others go on.
 */
export async function evaluateAlerts(env: Env, now = new Date()): Promise<RunSummary> {
  const config = configOf(env);
  const { db, close } = openDb(config);
  const started = Date.now();
  const summary: RunSummary = { rules: 0, evaluated: 0, changed: 0, notified: 0, failed: 0, ms: 0 };
  try {
    const rules = await activeRules(db);
    summary.rules = rules.length;
    const latest = await latestStatuses(
      db,
      rules.map((r) => r.id),
    );
    const run: Run = {
      env,
      origin: config.APP_URL,
      db,
      ch: openClickHouse(config),
      now,
      latest,
      summary,
      rules,
      judged: new Map(),
    };
    await forEachLimited(rules, CONCURRENCY, async (rule) => {
      for (const profile of rule.profiles) {
        // Each pair on its own: a failing profile (or ClickHouse hiccup) skips only that pair.
        try {
          await evaluatePair(run, rule, profile);
        } catch (err) {
          summary.failed++;
          console.error(
            "alert evaluation failed",
            rule.id,
            profile.id,
            err instanceof Error ? err.message : String(err),
          );
        }
      }
    });
  } finally {
    await close().catch(() => {});
  }
  summary.ms = Date.now() - started;
  console.log("alert evaluation", JSON.stringify(summary));
  return summary;
}

async function activeRules(db: Db): Promise<Rule[]> {
  const rows = await db
    .select({ rule: alertRules, map: { id: maps.id, mapId: maps.mapId, name: maps.name } })
    .from(alertRules)
    .innerJoin(maps, eq(maps.id, alertRules.mapId))
    .where(eq(alertRules.isActive, true))
    .orderBy(asc(alertRules.id));
  const ids = rows.map((r) => r.rule.id);
  if (!ids.length) {
    return [];
  }
  const [bundles, channels] = await Promise.all([
    db
      .select({ ruleId: alertRuleProfiles.alertRuleId, profile: thresholdProfiles })
      .from(alertRuleProfiles)
      .innerJoin(thresholdProfiles, eq(thresholdProfiles.id, alertRuleProfiles.thresholdProfileId))
      .where(inArray(alertRuleProfiles.alertRuleId, ids))
      .orderBy(asc(alertRuleProfiles.ordinal)),
    db.select().from(alertRuleChannels).where(inArray(alertRuleChannels.alertRuleId, ids)),
  ]);
  return rows.map(({ rule, map }) => ({
    ...rule,
    map,
    profiles: bundles.filter((b) => b.ruleId === rule.id).map((b) => b.profile),
    channelIds: channels.filter((c) => c.alertRuleId === rule.id).map((c) => c.channelId),
  }));
}

async function evaluatePair(run: Run, rule: Rule, profile: Profile): Promise<void> {
  const metric = rule.metric;
  const level = rule.thresholdLevel;
  const threshold = thresholdOf(profile, metric, level);
  if (threshold === null) {
    // Validation forbids it, but a profile edited afterwards may have dropped the threshold.
    throw new Error(`profile ${profile.id} defines no ${metric} ${level} threshold`);
  }
  const judged = (await judgedPairs(run, rule)).get(`${rule.id}:${profile.id}`);
  if (!judged) {
    throw new Error(`pair ${rule.id}:${profile.id} was not judged`);
  }
  const { worst, ...counts } = judged;
  run.summary.evaluated++;
  // No evaluated cells: nothing fails, so the pair is resolved at 0 of 0.
  const failPercentage = counts.totalCount ? (counts.failCount / counts.totalCount) * 100 : 0;
  const status = statusOf(rule, counts);
  if (run.latest.get(`${rule.id}:${profile.id}`)?.status === status) {
    return;
  }
  const eventId = crypto.randomUUID();
  // The scope as judged, so the event's links hold even after the rule changes; a resolved pair has
  // no failing cell worth listing.
  const record: WorstCellsRecord = {
    mapId: rule.map.mapId,
    days: rule.evaluationDays,
    cellSize: rule.cellSize,
    cells: status === "triggered" ? worst : [],
  };
  const notified =
    status === "triggered" &&
    (await notify(run, rule, profile, {
      type: "alert.triggered",
      eventId,
      createdAt: run.now.toISOString(),
      projectId: rule.projectId,
      rule: {
        id: rule.id,
        name: rule.name,
        metric,
        thresholdLevel: level,
        failPercentage: rule.failPercentage,
        evaluationDays: rule.evaluationDays,
        cellSize: rule.cellSize,
      },
      thresholdProfile: { id: profile.id, name: profile.name, threshold },
      map: rule.map,
      result: { status, ...counts, failPercentage },
      ...linked({ origin: run.origin, projectId: rule.projectId, metric, profileId: profile.id, record }),
    }));
  await run.db.insert(alertEvaluationEvents).values({
    id: eventId,
    projectId: rule.projectId,
    alertRuleId: rule.id,
    evaluatedProfileId: profile.id,
    thresholdProfileId: profile.id,
    thresholdProfileName: profile.name,
    ruleName: rule.name,
    metric,
    status,
    ...counts,
    failPercentage,
    notified,
    worstCells: record,
  });
  run.summary.changed++;
  if (notified) {
    run.summary.notified++;
  }
}

/** The pair's status a judgement gives: triggered when more than the rule's share of cells fail. */
function statusOf(rule: Rule, counts: { failCount: number; totalCount: number }): AlertStatus {
  const failPercentage = counts.totalCount ? (counts.failCount / counts.totalCount) * 100 : 0;
  return failPercentage > rule.failPercentage ? "triggered" : "resolved";
}

/**
 * The judgements of every pair of the run on the rule's project and map, read once for them all; the
 * failing shares only for the pairs that change to triggered (the only ones that record worst cells).
 */
function judgedPairs(run: Run, rule: Rule): Promise<Map<string, CellJudgement>> {
  const key = `${rule.projectId} ${rule.map.mapId}`;
  let judged = run.judged.get(key);
  if (!judged) {
    const pairs: Array<PairQuery & { rule: Rule }> = [];
    for (const r of run.rules) {
      if (r.projectId !== rule.projectId || r.map.mapId !== rule.map.mapId) {
        continue;
      }
      for (const profile of r.profiles) {
        const threshold = thresholdOf(profile, r.metric, r.thresholdLevel);
        if (threshold !== null) {
          pairs.push({
            key: `${r.id}:${profile.id}`,
            rule: r,
            projectId: r.projectId,
            mapId: r.map.mapId,
            window: windowOf(r.evaluationDays, run.now.getTime()),
            cellSize: r.cellSize,
            filters: {
              platform: profile.platform,
              resolution: profile.resolution,
              buildConfig: profile.buildConfig,
              gpu: profile.gpu,
              storage: profile.storage,
            },
            metric: r.metric,
            threshold,
          });
        }
      }
    }
    judged = judgeScopeGroup(
      run.ch,
      pairs,
      (p, counts) =>
        statusOf(p.rule, counts) === "triggered" && run.latest.get(p.key)?.status !== "triggered",
    );
    // A failed read fails every pair that awaits it (each is logged and skipped); the next run reads again.
    judged.catch(() => {});
    run.judged.set(key, judged);
  }
  return judged;
}

/**
 * Hands one message per channel to the notifications queue, if the pair's cooldown allows. Delivery
 * itself (and its retries) happens in the queue consumer, so a slow endpoint never holds up the run.
 */
async function notify(run: Run, rule: Rule, profile: Profile, alert: AlertNotification): Promise<boolean> {
  if (!rule.channelIds.length) {
    return false;
  }
  const cooldown = run.env.ALERT_COOLDOWN.get(run.env.ALERT_COOLDOWN.idFromName(`${rule.id}:${profile.id}`));
  const claim = await cooldown.claim(rule.cooldownMinutes, run.now.getTime());
  if (!claim.allowed) {
    return false;
  }
  try {
    await run.env.NOTIFICATIONS_QUEUE.sendBatch(
      rule.channelIds.map((channelId) => ({
        body: { v: 1, channelId, alert } satisfies NotificationMessage,
        contentType: "json" as const,
      })),
    );
    return true;
  } catch (err) {
    // No event is recorded for this change, so the next run sees it again and retries the notification.
    await cooldown.release(claim.lastNotifiedAt);
    throw err;
  }
}

async function forEachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
