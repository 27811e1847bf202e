import { desc, inArray } from "drizzle-orm";
import type { AlertStatus } from "../../../schema/pg/columns.js";
import { alertEvaluationEvents } from "../../../schema/pg/schema.js";
import type { Db } from "../db.js";

export type { AlertStatus } from "../../../schema/pg/columns.js";
export type LatestStatus = { status: AlertStatus; at: Date };

/** The newest recorded status of each (rule, evaluated profile) pair, keyed `${ruleId}:${profileId}`. */
export async function latestStatuses(db: Db, ruleIds: string[]): Promise<Map<string, LatestStatus>> {
  if (!ruleIds.length) {
    return new Map();
  }
  const e = alertEvaluationEvents;
  const rows = await db
    .selectDistinctOn([e.alertRuleId, e.evaluatedProfileId], {
      ruleId: e.alertRuleId,
      profileId: e.evaluatedProfileId,
      status: e.status,
      at: e.createdAt,
    })
    .from(e)
    .where(inArray(e.alertRuleId, ruleIds))
    .orderBy(e.alertRuleId, e.evaluatedProfileId, desc(e.createdAt), desc(e.id));
  return new Map(rows.map((r) => [`${r.ruleId}:${r.profileId}`, { status: r.status, at: r.at }]));
}
