import { eq } from "drizzle-orm";
import type { Context } from "hono";
import { tenants } from "../../../schema/pg/schema.js";
import { ApiError } from "../../shared/errors.js";
import { type PlanId, planOf } from "../../shared/plans.js";
import { audit } from "../audit/record.js";
import type { AppEnv } from "../context.js";
import { type DataRetention, dataRetentionOf, forgetDataRetention } from "./horizon.js";

/** The rule a choice must meet, as the API and the settings page word it. */
export function retentionRule(planId: PlanId): string {
  return `a whole number of days from 1 to ${planOf(planId).retentionDays} (the plan's retention), or empty for the plan's`;
}

/** Null when `days` is a valid choice under the plan, else the rule it breaks. */
export function dataRetentionProblem(planId: PlanId, days: number | null): string | null {
  if (days === null) {
    return null;
  }
  return Number.isInteger(days) && days >= 1 && days <= planOf(planId).retentionDays
    ? null
    : retentionRule(planId);
}

/**
 * Sets the studio's chosen retention (null: the plan's) and records `studio.retention_changed` in the
 * same transaction (detail.from, .to: the days kept before and after). Refuses a choice outside
 * 1..plan with a 400 naming json.retentionDays, changing nothing. Reads stop at the new horizon at
 * once in this isolate and within a minute in every other (horizon.ts); the purge deletes the rows
 * within a day (purge.ts).
 */
export async function changeDataRetention<E extends AppEnv>(
  c: Context<E>,
  tenantId: string,
  planId: PlanId,
  days: number | null,
): Promise<DataRetention> {
  const problem = dataRetentionProblem(planId, days);
  if (problem !== null) {
    throw new ApiError("BAD_REQUEST", `json.retentionDays: ${problem}`, {
      extensions: { field: "json.retentionDays" },
    });
  }
  const ctx = c as unknown as Context<AppEnv>;
  await ctx.get("db").transaction(async (tx) => {
    const [row] = await tx
      .select({ days: tenants.retentionDays, name: tenants.name })
      .from(tenants)
      .where(eq(tenants.id, tenantId))
      .for("update");
    await tx
      .update(tenants)
      .set({ retentionDays: days, updatedAt: new Date(ctx.get("now")) })
      .where(eq(tenants.id, tenantId));
    const from = dataRetentionOf(planId, row?.days ?? null, ctx.get("now"));
    const to = dataRetentionOf(planId, days, ctx.get("now"));
    await audit(
      ctx,
      {
        action: "studio.retention_changed",
        target: { type: "studio", id: tenantId, label: row?.name ?? null },
        projectId: null,
        detail: { from: from.days, to: to.days, chosen: days },
      },
      tx,
    );
  });
  forgetDataRetention(tenantId);
  return dataRetentionOf(planId, days, ctx.get("now"));
}
