import { and, asc, eq, inArray } from "drizzle-orm";
import type { PairResult } from "../../../schema/pg/columns.js";
import {
  alertPairStates,
  alertRuleChannels,
  alertRuleProfiles,
  alertRules,
  maps,
  thresholdProfiles,
} from "../../../schema/pg/schema.js";
import { ApiError } from "../../shared/errors.js";
import type { AlertMetricKey } from "../../shared/telemetry/metrics.js";
import type { Db, Tx } from "../db.js";
import { type AlertStatus, latestStatuses } from "./latest.js";
import type { ThresholdLevel } from "./metrics.js";

export type RuleDetail = {
  id: string;
  projectId: string;
  mapId: string;
  thresholdProfileId: string | null;
  thresholdProfileIds: string[];
  name: string;
  metric: AlertMetricKey;
  thresholdLevel: ThresholdLevel;
  failPercentage: number;
  evaluationDays: number;
  cellSize: number;
  cooldownMinutes: number;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
  channelIds: string[];
  /** The oldest of the bundle's last evaluations: null until every profile has been evaluated once. */
  lastEvaluatedAt: string | null;
  /** "error" if any profile's last evaluation failed, else "triggered" if any triggered, else "resolved". */
  lastResult: PairResult | null;
  lastEvaluations: LastEvaluation[];
};

/** One profile's last evaluation (alert_pair_states). */
export type LastEvaluation = {
  thresholdProfileId: string;
  evaluatedAt: string;
  /** The scheduled run it belongs to. */
  runAt: string;
  result: PairResult;
  failCount: number | null;
  totalCount: number | null;
  failPercentage: number | null;
  error: string | null;
};

export type RuleListItem = RuleDetail & {
  mapName: string;
  thresholdProfileNames: string[];
  lastStatus: AlertStatus | null;
  lastStatusAt: string | null;
};

/** Rules of a project (one, when `ruleId` is given), newest first, with bundle, channels and joins. */
export async function loadRules(db: Db, projectId: string, ruleId?: string): Promise<RuleListItem[]> {
  const rows = await db
    .select({ rule: alertRules, mapName: maps.name })
    .from(alertRules)
    .innerJoin(maps, eq(maps.id, alertRules.mapId))
    .where(
      and(eq(alertRules.projectId, projectId), ruleId === undefined ? undefined : eq(alertRules.id, ruleId)),
    )
    .orderBy(asc(alertRules.createdAt), asc(alertRules.id));
  const ids = rows.map((r) => r.rule.id);
  if (!ids.length) {
    return [];
  }
  const [bundles, channels, latest, states] = await Promise.all([
    db
      .select({
        ruleId: alertRuleProfiles.alertRuleId,
        profileId: alertRuleProfiles.thresholdProfileId,
        name: thresholdProfiles.name,
      })
      .from(alertRuleProfiles)
      .innerJoin(thresholdProfiles, eq(thresholdProfiles.id, alertRuleProfiles.thresholdProfileId))
      .where(inArray(alertRuleProfiles.alertRuleId, ids))
      .orderBy(asc(alertRuleProfiles.ordinal)),
    db
      .select()
      .from(alertRuleChannels)
      .where(inArray(alertRuleChannels.alertRuleId, ids))
      .orderBy(asc(alertRuleChannels.channelId)),
    latestStatuses(db, ids),
    db.select().from(alertPairStates).where(inArray(alertPairStates.alertRuleId, ids)),
  ]);
  return rows.reverse().map(({ rule, mapName }) => {
    const bundle = bundles.filter((b) => b.ruleId === rule.id);
    const statuses = bundle.flatMap((b) => latest.get(`${rule.id}:${b.profileId}`) ?? []);
    const newest = statuses.reduce<Date | null>((m, s) => (m && m > s.at ? m : s.at), null);
    const evaluations = bundle.flatMap((b) =>
      states
        .filter((s) => s.alertRuleId === rule.id && s.thresholdProfileId === b.profileId)
        .map(
          (s): LastEvaluation => ({
            thresholdProfileId: s.thresholdProfileId,
            evaluatedAt: s.evaluatedAt.toISOString(),
            runAt: s.runAt.toISOString(),
            result: s.result,
            failCount: s.failCount,
            totalCount: s.totalCount,
            failPercentage: s.failPercentage,
            error: s.error,
          }),
        ),
    );
    const complete = bundle.length > 0 && evaluations.length === bundle.length;
    return {
      id: rule.id,
      projectId: rule.projectId,
      mapId: rule.mapId,
      thresholdProfileId: bundle[0]?.profileId ?? null,
      thresholdProfileIds: bundle.map((b) => b.profileId),
      name: rule.name,
      metric: rule.metric,
      thresholdLevel: rule.thresholdLevel,
      failPercentage: rule.failPercentage,
      evaluationDays: rule.evaluationDays,
      cellSize: rule.cellSize,
      cooldownMinutes: rule.cooldownMinutes,
      isActive: rule.isActive,
      createdAt: rule.createdAt.toISOString(),
      updatedAt: rule.updatedAt.toISOString(),
      channelIds: channels.filter((c) => c.alertRuleId === rule.id).map((c) => c.channelId),
      // ISO strings of one format sort as times: the first is the oldest.
      lastEvaluatedAt: complete ? ([...evaluations.map((e) => e.evaluatedAt)].sort()[0] ?? null) : null,
      lastResult: evaluations.length
        ? evaluations.some((e) => e.result === "error")
          ? "error"
          : evaluations.some((e) => e.result === "triggered")
            ? "triggered"
            : "resolved"
        : null,
      lastEvaluations: evaluations,
      mapName,
      thresholdProfileNames: bundle.map((b) => b.name),
      // A bundle's profiles are independent: the rule counts as triggered while any of them is.
      lastStatus: statuses.length
        ? statuses.some((s) => s.status === "triggered")
          ? "triggered"
          : "resolved"
        : null,
      lastStatusAt: newest?.toISOString() ?? null,
    };
  });
}

export async function loadRule(db: Db, projectId: string, ruleId: string): Promise<RuleListItem> {
  const [rule] = await loadRules(db, projectId, ruleId);
  if (!rule) {
    throw new ApiError("NOT_FOUND", "Alert rule not found.");
  }
  return rule;
}

/** The detail form: the list item without its joined fields. */
export function detailOf(item: RuleListItem): RuleDetail {
  const { mapName: _m, thresholdProfileNames: _n, lastStatus: _s, lastStatusAt: _a, ...detail } = item;
  return detail;
}

/** Replaces a rule's bundle; the order given is the order kept (first is primary). */
export async function writeBundle(tx: Tx, ruleId: string, profileIds: string[]): Promise<void> {
  await tx.delete(alertRuleProfiles).where(eq(alertRuleProfiles.alertRuleId, ruleId));
  await tx
    .insert(alertRuleProfiles)
    .values(
      profileIds.map((thresholdProfileId, ordinal) => ({ alertRuleId: ruleId, thresholdProfileId, ordinal })),
    );
}

export async function writeChannels(tx: Tx, ruleId: string, channelIds: string[]): Promise<void> {
  await tx.delete(alertRuleChannels).where(eq(alertRuleChannels.alertRuleId, ruleId));
  if (channelIds.length) {
    await tx
      .insert(alertRuleChannels)
      .values(channelIds.map((channelId) => ({ alertRuleId: ruleId, channelId })));
  }
}
