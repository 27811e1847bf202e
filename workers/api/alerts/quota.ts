import { and, count, eq } from "drizzle-orm";
import { alertRules, projects, tenants } from "../../../schema/pg/schema.js";
import { ApiError } from "../../shared/errors.js";
import { planOf } from "../../shared/plans.js";
import type { Tx } from "../db.js";

/**
 * Refuses one more active rule beyond the plan's maximum. Call inside the transaction that activates
 * the rule: the tenant row is locked FOR UPDATE first, so concurrent creations or reactivations of the
 * same tenant queue behind each other and each counts the others' committed rules.
 */
export async function assertActiveRuleQuota(tx: Tx, tenantId: string): Promise<void> {
  const [tenant] = await tx
    .select({ planId: tenants.planId })
    .from(tenants)
    .where(eq(tenants.id, tenantId))
    .for("update");
  const max = planOf(tenant?.planId ?? "free").maxActiveAlertRules;
  if (max === 0) {
    throw new ApiError("FORBIDDEN", "Alerting is not available on this plan (feature not available).", {
      extensions: { reason: "feature_not_available" },
    });
  }
  const [active] = await tx
    .select({ n: count() })
    .from(alertRules)
    .innerJoin(projects, eq(projects.id, alertRules.projectId))
    .where(and(eq(projects.tenantId, tenantId), eq(alertRules.isActive, true)));
  if ((active?.n ?? 0) >= max) {
    throw new ApiError("FORBIDDEN", `Plan limit reached: at most ${max} active alert rules.`, {
      extensions: { reason: "plan_limit", limit: max },
    });
  }
}
