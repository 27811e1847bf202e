import { and, eq, inArray } from "drizzle-orm";
import { maps, notificationChannels, thresholdProfiles } from "../../../schema/pg/schema.js";
import { ApiError } from "../../shared/errors.js";
import type { AlertMetricKey } from "../../shared/telemetry/metrics.js";
import type { Tx } from "../db.js";
import { type ThresholdLevel, thresholdField, thresholdOf } from "./metrics.js";

/** The fields of a rule that refer to other records, as they will be after the request. */
export type RuleReferences = {
  mapId: string;
  thresholdProfileIds: string[];
  metric: AlertMetricKey;
  thresholdLevel: ThresholdLevel;
  channelIds: string[];
  /** An inactive rule may have lost its whole bundle to profile deletions; an active one may not. */
  isActive: boolean;
};

function bad(field: string, rule: string): ApiError {
  return new ApiError("BAD_REQUEST", `${field}: ${rule}`, { extensions: { field } });
}

/**
 * The map, every profile and every channel must belong to the project, and every profile must define
 * the threshold the rule compares against. Records of other projects read as unknown ids.
 */
export async function validateReferences(tx: Tx, projectId: string, rule: RuleReferences): Promise<void> {
  const bundle = rule.thresholdProfileIds;
  if ((rule.isActive && bundle.length < 1) || bundle.length > 10) {
    throw bad("thresholdProfileIds", "the rule needs 1 to 10 threshold profiles");
  }
  const [map] = await tx
    .select({ id: maps.id })
    .from(maps)
    .where(and(eq(maps.id, rule.mapId), eq(maps.projectId, projectId)));
  if (!map) {
    throw bad("mapId", "no such map in this project");
  }
  const profiles = await tx
    .select()
    .from(thresholdProfiles)
    .where(and(inArray(thresholdProfiles.id, bundle), eq(thresholdProfiles.projectId, projectId)));
  for (const [i, id] of bundle.entries()) {
    const profile = profiles.find((p) => p.id === id);
    const field = `thresholdProfileIds.${i}`;
    if (!profile) {
      throw bad(field, "no such threshold profile in this project");
    }
    if (thresholdOf(profile, rule.metric, rule.thresholdLevel) === null) {
      const needed = thresholdField(rule.metric, rule.thresholdLevel);
      throw bad(
        field,
        `profile "${profile.name}" does not define ${needed}, needed for this metric and level`,
      );
    }
  }
  if (rule.channelIds.length) {
    const channels = await tx
      .select({ id: notificationChannels.id })
      .from(notificationChannels)
      .where(
        and(inArray(notificationChannels.id, rule.channelIds), eq(notificationChannels.projectId, projectId)),
      );
    const found = new Set(channels.map((c) => c.id));
    const missing = rule.channelIds.findIndex((id) => !found.has(id));
    if (missing >= 0) {
      throw bad(`channelIds.${missing}`, "no such notification channel in this project");
    }
  }
}
