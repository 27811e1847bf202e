import { and, eq, inArray, notExists, sql } from "drizzle-orm";
import { alertEvaluationEvents, alertRuleProfiles, alertRules } from "../../../schema/pg/schema.js";
import type { Tx } from "../db.js";

export type ProfileDeletionEffects = {
  /** Rules whose bundle held the profile. */
  affectedRuleIds: string[];
  /** Of those, the rules left without any profile and so deactivated. */
  deactivatedRuleIds: string[];
};

/**
 * What deleting a threshold profile does to alerting. Call inside the profile DELETE transaction,
 * before the profile row itself is deleted:
 * - evaluation events that used it are kept and marked deleted (id and name read back as null), never
 *   reattributed: `evaluatedProfileId` keeps the original id for the per-pair status history;
 * - it leaves every bundle; the next profile by ordinal becomes primary simply by being the lowest;
 * - a rule whose bundle is now empty is deactivated (it keeps its record and history).
 */
export async function applyProfileDeletion(
  tx: Tx,
  projectId: string,
  profileId: string,
): Promise<ProfileDeletionEffects> {
  await tx
    .update(alertEvaluationEvents)
    .set({ thresholdProfileId: null, thresholdProfileName: null, thresholdProfileDeleted: true })
    .where(
      and(
        eq(alertEvaluationEvents.projectId, projectId),
        eq(alertEvaluationEvents.evaluatedProfileId, profileId),
      ),
    );
  const removed = await tx
    .delete(alertRuleProfiles)
    .where(
      and(
        eq(alertRuleProfiles.thresholdProfileId, profileId),
        inArray(
          alertRuleProfiles.alertRuleId,
          tx.select({ id: alertRules.id }).from(alertRules).where(eq(alertRules.projectId, projectId)),
        ),
      ),
    )
    .returning({ ruleId: alertRuleProfiles.alertRuleId });
  const affectedRuleIds = removed.map((r) => r.ruleId);
  if (!affectedRuleIds.length) {
    return { affectedRuleIds, deactivatedRuleIds: [] };
  }
  await tx.update(alertRules).set({ updatedAt: sql`now()` }).where(inArray(alertRules.id, affectedRuleIds));
  const deactivated = await tx
    .update(alertRules)
    .set({ isActive: false })
    .where(
      and(
        inArray(alertRules.id, affectedRuleIds),
        eq(alertRules.isActive, true),
        notExists(
          tx
            .select({ one: sql`1` })
            .from(alertRuleProfiles)
            .where(eq(alertRuleProfiles.alertRuleId, alertRules.id)),
        ),
      ),
    )
    .returning({ id: alertRules.id });
  return { affectedRuleIds, deactivatedRuleIds: deactivated.map((r) => r.id) };
}
