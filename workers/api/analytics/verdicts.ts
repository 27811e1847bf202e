import type { ClickHouseClient } from "@clickhouse/client-web";
import { and, eq, inArray } from "drizzle-orm";
import type { VerdictGroup } from "../../../schema/pg/columns.js";
import {
  type BuildVerdictRow,
  buildBaselines,
  buildVerdicts,
  notificationChannels,
} from "../../../schema/pg/schema.js";
import { CH_BUILD_DAYS, openClickHouse } from "../../shared/clickhouse.js";
import { configOf } from "../../shared/config.js";
import { type Db, openDb } from "../db.js";
import { type Window, windowOf } from "../window.js";
import { COMPARE_METRICS, type CompareMetric, type Comparison } from "./compare.js";
import {
  buildRegressions,
  defaultBaseline,
  judgedFamily,
  judgeRankedGroups,
  medianFamilies,
  POOR_SESSION_SHARE,
  REGRESSION_METRICS,
  type RegressionGroup,
  type RegressionMetric,
  sessionValueRanks,
  type Verdict,
} from "./regressions.js";
import { selectRows } from "./select.js";

// Verdicts per build (docs/analytics.md, "Verdicts per build"): when a build first has enough sessions,
// the cron (the API Worker's scheduled(), beside the alert evaluation) compares it with its baseline
// (the build the studio pinned on the Builds page, else its predecessor) for every metric, keeps one
// row per build and metric in Postgres (build_verdicts), and queues one notification per regressed
// metric to the project's channels that take build regressions. The row's primary key is what makes
// the notification once per build and metric: only the run whose insert kept the row sends it.

/** Sessions a build needs in the window before it is judged: the endpoint's minSessions default. */
export const VERDICT_MIN_SESSIONS = 20;
/** The smallest change that counts, in percent of the baseline: the endpoint's default. */
export const VERDICT_MIN_EFFECT_PCT = 3;
/** The window a verdict is judged over, and how recently a build must be first seen to be judged. */
export const VERDICT_DAYS = 30;
/** Builds judged per cron run at most, newest first: the rest wait for the next run (5 minutes). */
export const BUILDS_PER_RUN = 10;
/** Groups a notification lists per grouping. */
const GROUPS_IN_MESSAGE = 10;

export type BuildRef = { projectId: string; buildId: string };

/**
 * Builds of every project with performance samples in the last VERDICT_DAYS days and at least
 * VERDICT_MIN_SESSIONS sessions there (telemetry.build_days: a row per project, day and build), newest first, that have no
 * kept verdict yet. Cost: the rollup's rows of the window (a few per project, day and build) and one
 * Postgres read of the verdicts of those projects.
 */
export async function buildsToJudge(ch: ClickHouseClient, db: Db, nowMs: number): Promise<BuildRef[]> {
  const w = windowOf(VERDICT_DAYS, nowMs);
  const rows = await selectRows(
    ch,
    `SELECT toString(project_id) AS project, toString(build_id) AS build, min(first_seen) AS first,
        groupBitmapMerge(sessions) AS session_count
      FROM ${CH_BUILD_DAYS}
      WHERE day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
      GROUP BY project_id, build_id
      HAVING session_count >= {min:UInt32}
      ORDER BY first DESC, project, build
      LIMIT 1000`,
    { from: w.from, to: w.to, min: VERDICT_MIN_SESSIONS },
    { project: "string", build: "string", first: "unknown", session_count: "unknown" },
  );
  if (!rows.length) {
    return [];
  }
  const projects = [...new Set(rows.map((r) => r.project))];
  const judged = await db
    .selectDistinct({ projectId: buildVerdicts.projectId, buildId: buildVerdicts.buildId })
    .from(buildVerdicts)
    .where(inArray(buildVerdicts.projectId, projects));
  const done = new Set(judged.map((j) => `${j.projectId}\n${j.buildId}`));
  return rows
    .filter((r) => !done.has(`${r.project}\n${r.build}`))
    .map((r) => ({ projectId: r.project, buildId: r.build }));
}

/** The baseline of a build: the project's pinned build (unless it is the build itself), else its predecessor. */
export async function baselineOf(
  ch: ClickHouseClient,
  db: Db,
  b: BuildRef,
): Promise<{ buildId: string; pinned: boolean } | null> {
  const [pin] = await db.select().from(buildBaselines).where(eq(buildBaselines.projectId, b.projectId));
  if (pin && pin.buildId !== b.buildId) {
    return { buildId: pin.buildId, pinned: true };
  }
  const previous = await defaultBaseline(ch, b.projectId, b.buildId);
  return previous === null ? null : { buildId: previous, pinned: false };
}

const group = (g: RegressionGroup): VerdictGroup => ({ ...g });

/** What a notification of one regressed build and metric carries (webhook JSON; Slack renders it). */
export type RegressionNotification = {
  type: "build.regressed";
  /** The same on every retry and run: receivers deduplicate on it (also the delivery header). */
  eventId: string;
  createdAt: string;
  projectId: string;
  build: { id: string; baseline: string; baselinePinned: boolean };
  metric: BuildVerdictRow["metric"];
  overall: VerdictGroup;
  /** The regressed groups first, then the rest, at most 10 per grouping. */
  groups: { platform: VerdictGroup[]; gpu: VerdictGroup[] };
  links: { compare: string; builds: string };
};

export type JudgeOutcome = { kept: number; notified: number };

/**
 * Judges one build against its baseline for every metric and keeps the verdicts; a metric whose row
 * another run already kept is left alone (and not notified again). Returns how many rows this run kept
 * and how many notifications it queued. Without a baseline (the project's first build) nothing is kept
 * and the next run asks again.
 */
export async function judgeBuild(
  env: Pick<Env, "NOTIFICATIONS_QUEUE">,
  ch: ClickHouseClient,
  db: Db,
  origin: string,
  b: BuildRef,
  now: Date,
): Promise<JudgeOutcome> {
  const baseline = await baselineOf(ch, db, b);
  const out: JudgeOutcome = { kept: 0, notified: 0 };
  if (!baseline) {
    return out;
  }
  const w = windowOf(VERDICT_DAYS, now.getTime());
  const channels = await db
    .select({ id: notificationChannels.id })
    .from(notificationChannels)
    .where(
      and(eq(notificationChannels.projectId, b.projectId), eq(notificationChannels.buildRegressions, true)),
    );
  // One read for every metric and the three families the verdict keeps (overall, by platform, by GPU):
  // what builds/regressions by=platform and by=gpu answer, metric by metric (regressions.ts medianFamilies).
  const families = await medianFamilies(
    ch,
    b.projectId,
    w,
    { baseline: baseline.buildId, candidate: b.buildId, keys: [null, "platform", "gpu"], ranks: "central" },
    REGRESSION_METRICS,
  );
  const judgements: Array<{
    metric: BuildVerdictRow["metric"];
    o: RegressionGroup;
    platforms: RegressionGroup[];
    gpus: RegressionGroup[];
  }> = REGRESSION_METRICS.map((metric) => {
    const q = { metric, minEffectPct: VERDICT_MIN_EFFECT_PCT, minSessions: VERDICT_MIN_SESSIONS };
    return {
      metric,
      o: judgedFamily(families, null, q)[0] as RegressionGroup,
      platforms: judgedFamily(families, "platform", q),
      gpus: judgedFamily(families, "gpu", q),
    };
  });
  // And the share of poor sessions (session-verdicts.ts), as builds/regressions judges it by platform;
  // its overall group, kept with the groups, carries the build's sessions by verdict. Not by GPU: the
  // read merges every session's frames of the two builds (no stored days yet), and one is enough.
  const byPlatform = await buildRegressions(ch, b.projectId, w, {
    baseline: baseline.buildId,
    candidate: b.buildId,
    metric: POOR_SESSION_SHARE,
    by: "platform",
    minEffectPct: VERDICT_MIN_EFFECT_PCT,
    minSessions: VERDICT_MIN_SESSIONS,
  });
  judgements.push({
    metric: POOR_SESSION_SHARE,
    o: byPlatform.overall,
    platforms: byPlatform.groups,
    gpus: [],
  });
  for (const { metric, o, platforms, gpus } of judgements) {
    const kept = await db
      .insert(buildVerdicts)
      .values({
        projectId: b.projectId,
        buildId: b.buildId,
        metric,
        baselineBuildId: baseline.buildId,
        baselinePinned: baseline.pinned,
        verdict: o.verdict,
        diffPct: o.diffPct,
        ciLow: o.ci95?.[0] ?? null,
        ciHigh: o.ci95?.[1] ?? null,
        baselineSessions: o.baseline.sessions,
        candidateSessions: o.candidate.sessions,
        groups: {
          platform: platforms.map(group),
          gpu: gpus.map(group),
          ...(metric === POOR_SESSION_SHARE ? { overall: group(o) } : {}),
        },
        judgedAt: now,
      })
      .onConflictDoNothing()
      .returning({ metric: buildVerdicts.metric });
    if (!kept.length) {
      continue;
    }
    out.kept++;
    if (o.verdict !== "regressed" || !channels.length) {
      continue;
    }
    const base = origin.replace(/\/+$/, "");
    const compare = new URLSearchParams({
      baseline: baseline.buildId,
      candidate: b.buildId,
      days: String(VERDICT_DAYS),
    });
    const regressedFirst = (gs: RegressionGroup[]) =>
      [...gs.filter((g) => g.verdict === "regressed"), ...gs.filter((g) => g.verdict !== "regressed")]
        .slice(0, GROUPS_IN_MESSAGE)
        .map(group);
    const message: RegressionNotification = {
      type: "build.regressed",
      eventId: `build-regressed:${b.projectId}:${b.buildId}:${metric}`,
      createdAt: now.toISOString(),
      projectId: b.projectId,
      build: { id: b.buildId, baseline: baseline.buildId, baselinePinned: baseline.pinned },
      metric,
      overall: group(o),
      groups: { platform: regressedFirst(platforms), gpu: regressedFirst(gpus) },
      links: {
        compare: `${base}/projects/${b.projectId}/compare?${compare}`,
        builds: `${base}/projects/${b.projectId}/builds`,
      },
    };
    try {
      await env.NOTIFICATIONS_QUEUE.sendBatch(
        channels.map((c) => ({
          body: { v: 1, channelId: c.id, alert: message },
          contentType: "json" as const,
        })),
      );
    } catch (err) {
      // Not sent: the row goes, so the next run judges this metric again and sends it then.
      await db
        .delete(buildVerdicts)
        .where(
          and(
            eq(buildVerdicts.projectId, b.projectId),
            eq(buildVerdicts.buildId, b.buildId),
            eq(buildVerdicts.metric, metric),
          ),
        );
      throw err;
    }
    await db
      .update(buildVerdicts)
      .set({ notified: true })
      .where(
        and(
          eq(buildVerdicts.projectId, b.projectId),
          eq(buildVerdicts.buildId, b.buildId),
          eq(buildVerdicts.metric, metric),
        ),
      );
    out.notified += channels.length;
  }
  return out;
}

export type VerdictRunSummary = {
  builds: number;
  kept: number;
  notified: number;
  failed: number;
  ms: number;
};

/** One cron run: the newest BUILDS_PER_RUN builds ready to judge, one after another. */
export async function judgeNewBuilds(
  env: Pick<Env, "NOTIFICATIONS_QUEUE">,
  ch: ClickHouseClient,
  db: Db,
  origin: string,
  now: Date,
): Promise<VerdictRunSummary> {
  const started = Date.now();
  const summary: VerdictRunSummary = { builds: 0, kept: 0, notified: 0, failed: 0, ms: 0 };
  const ready = (await buildsToJudge(ch, db, now.getTime())).slice(0, BUILDS_PER_RUN);
  for (const b of ready) {
    summary.builds++;
    try {
      const o = await judgeBuild(env, ch, db, origin, b, now);
      summary.kept += o.kept;
      summary.notified += o.notified;
    } catch (err) {
      summary.failed++;
      console.error(
        "build verdict failed",
        b.projectId,
        b.buildId,
        err instanceof Error ? err.message : String(err),
      );
    }
  }
  summary.ms = Date.now() - started;
  console.log("build verdicts", JSON.stringify(summary));
  return summary;
}

/** The kept verdicts of some builds of a project, by build then metric (the Builds list's fields). */
export async function verdictsOf(db: Db, projectId: string, buildIds: string[]): Promise<BuildVerdictRow[]> {
  if (!buildIds.length) {
    return [];
  }
  return db
    .select()
    .from(buildVerdicts)
    .where(and(eq(buildVerdicts.projectId, projectId), inArray(buildVerdicts.buildId, buildIds)));
}

/** The cron's entry (the API Worker's scheduled(), after the alert evaluation): judgeNewBuilds on its engines. */
export async function judgeBuilds(env: Env, now: Date): Promise<VerdictRunSummary> {
  const config = configOf(env);
  const { db, close } = openDb(config);
  try {
    return await judgeNewBuilds(env, openClickHouse(config), db, config.APP_URL, now);
  } finally {
    await close().catch(() => {});
  }
}

export type MetricVerdict = {
  verdict: BuildVerdictRow["verdict"];
  diff_pct: number | null;
  ci95: [number, number] | null;
  baseline_sessions: number;
  candidate_sessions: number;
};

export type BuildVerdict = {
  baseline_build_id: string;
  baseline_pinned: boolean;
  judged_at: string;
  metrics: Record<BuildVerdictRow["metric"], MetricVerdict | null>;
  /** The build's sessions by verdict over the judged window (the poor_session_share verdict's); null before it. */
  session_verdicts: SessionVerdictCounts | null;
};

export type SessionVerdictCounts = {
  good: number;
  acceptable: number;
  poor: number;
  unjudged: number;
  poor_share: number | null;
};

/** The candidate's sessions by verdict, from the poor_session_share row's overall group. */
function sessionVerdictsOf(row: BuildVerdictRow | undefined): SessionVerdictCounts | null {
  const v = (
    row?.groups.overall?.candidate as { sessionVerdicts?: Record<string, number | null> } | undefined
  )?.sessionVerdicts;
  if (!v) {
    return null;
  }
  return {
    good: Number(v.good),
    acceptable: Number(v.acceptable),
    poor: Number(v.poor),
    unjudged: Number(v.unjudged),
    poor_share: v.poorShare === null || v.poorShare === undefined ? null : Number(v.poorShare),
  };
}

/**
 * The Builds list's additive fields: whether each build is the pinned baseline, and its kept verdicts
 * (null until judged). Two Postgres reads by primary key, whatever the list's length (at most 50).
 */
export async function decorateBuilds<B extends { build_id: string }>(
  db: Db,
  projectId: string,
  builds: B[],
): Promise<Array<B & { pinned_baseline: boolean; verdict: BuildVerdict | null }>> {
  const [rows, [pin]] = await Promise.all([
    verdictsOf(
      db,
      projectId,
      builds.map((b) => b.build_id),
    ),
    db.select().from(buildBaselines).where(eq(buildBaselines.projectId, projectId)),
  ]);
  const byBuild = new Map<string, BuildVerdictRow[]>();
  for (const r of rows) {
    byBuild.set(r.buildId, [...(byBuild.get(r.buildId) ?? []), r]);
  }
  return builds.map((b) => {
    const kept = byBuild.get(b.build_id) ?? [];
    const first = kept[0];
    const metric = (m: BuildVerdictRow["metric"]): MetricVerdict | null => {
      const r = kept.find((k) => k.metric === m);
      return r
        ? {
            verdict: r.verdict,
            diff_pct: r.diffPct,
            ci95: r.ciLow === null || r.ciHigh === null ? null : [r.ciLow, r.ciHigh],
            baseline_sessions: r.baselineSessions,
            candidate_sessions: r.candidateSessions,
          }
        : null;
    };
    return {
      ...b,
      pinned_baseline: pin?.buildId === b.build_id,
      verdict: first
        ? {
            baseline_build_id: first.baselineBuildId,
            baseline_pinned: first.baselinePinned,
            judged_at: first.judgedAt.toISOString(),
            metrics: {
              fps: metric("fps"),
              frame_time: metric("frame_time"),
              memory: metric("memory"),
              gpu_time: metric("gpu_time"),
              poor_session_share: metric("poor_session_share"),
            },
            session_verdicts: sessionVerdictsOf(kept.find((k) => k.metric === "poor_session_share")),
          }
        : null,
    };
  });
}

/** builds/compare's additive fields per metric: the session-level verdict the regressions endpoint gives. */
export type DiffVerdict = {
  /** Null for the metrics the regressions do not judge (io.*, load_time_ms, mem.vram). */
  verdict: Verdict | null;
  ci95: [number, number] | null;
  sessionDiffPct: number | null;
  baselineSessions: number | null;
  candidateSessions: number | null;
};

/** builds/compare's metrics the regressions judge, by their name there. */
const JUDGED: Partial<Record<CompareMetric, RegressionMetric>> = {
  frame_time: "frame_time",
  memory: "memory",
  gpu_time: "gpu_time",
};

/**
 * Adds each judged metric's verdict and interval to a comparison: the candidate against the baseline with
 * the regressions' defaults (minSessions 20, minEffectPct 3), overall, or the platform's group when the
 * comparison is filtered to one platform, on the same map filter. A metric with too few sessions is
 * insufficient_data rather than a regression (the reason for these fields: isRegression says only that
 * the candidate's p50 is higher, however few the samples).
 */
export async function withVerdicts(
  ch: ClickHouseClient,
  projectId: string,
  w: Window,
  q: { baseline: string; candidate: string; mapId?: string; platform?: string },
  comparison: Comparison | Promise<Comparison>,
): Promise<Comparison & { diffs: Array<Comparison["diffs"][number] & DiffVerdict> }> {
  const metrics = COMPARE_METRICS.flatMap((m) => JUDGED[m] ?? []);
  // One read for every judged metric (regressions.ts sessionValueRanks), beside the comparison's own:
  // the overall sides, or with a platform filter every platform's group, as builds/regressions
  // by=platform judges them together.
  const [cmp, families] = await Promise.all([
    comparison,
    sessionValueRanks(
      ch,
      projectId,
      w,
      { baseline: q.baseline, candidate: q.candidate, mapId: q.mapId, byPlatform: q.platform !== undefined },
      metrics,
    ),
  ]);
  const judged = cmp.diffs.map((d): DiffVerdict => {
    const metric = JUDGED[d.metric];
    if (metric === undefined) {
      return {
        verdict: null,
        ci95: null,
        sessionDiffPct: null,
        baselineSessions: null,
        candidateSessions: null,
      };
    }
    const groups = judgeRankedGroups(families.get(metric) ?? [], {
      metric,
      minEffectPct: VERDICT_MIN_EFFECT_PCT,
      minSessions: VERDICT_MIN_SESSIONS,
    });
    const g =
      (q.platform === undefined ? groups[0] : groups.find((x) => x.key === q.platform)) ??
      ({
        baseline: { sessions: 0, median: null },
        candidate: { sessions: 0, median: null },
        diffPct: null,
        ci95: null,
        verdict: "insufficient_data",
      } as const);
    return {
      verdict: g.verdict,
      ci95: g.ci95,
      sessionDiffPct: g.diffPct,
      baselineSessions: g.baseline.sessions,
      candidateSessions: g.candidate.sessions,
    };
  });
  return { ...cmp, diffs: cmp.diffs.map((d, i) => ({ ...d, ...(judged[i] as DiffVerdict) })) };
}
