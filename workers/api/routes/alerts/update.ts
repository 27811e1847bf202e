import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { alertRules } from "../../../../schema/pg/schema.js";
import { assertActiveRuleQuota } from "../../alerts/quota.js";
import { detailOf, loadRule, writeBundle, writeChannels } from "../../alerts/rules.js";
import { validateReferences } from "../../alerts/validate.js";
import { auditResource, fieldsOf } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { bodyUpTo, RESOURCE_BODY_BYTES } from "../../middleware/body-limits.js";
import { envelope, errorResponses, policy, problemDoc } from "../../openapi.js";
import { RuleIdParams, RuleSchema, requestedBundle, UpdateRuleSchema } from "./schema.js";

export const route = createRoute({
  method: "patch",
  path: "/v1/projects/{id}/alerts/{alertId}",
  operationId: "updateAlertRule",
  tags: ["Alerts"],
  summary: "Update an alert rule (partial); isActive: true reactivates it",
  description:
    "Every field is optional; the resulting rule is validated as on create. `thresholdProfileIds` " +
    "replaces the bundle; `thresholdProfileId` alone replaces it with a bundle of one. Reactivation " +
    "answers 403 at the plan's maximum of active rules.",
  ...policy({ scope: "resources:write", project: "path" }, bodyUpTo(RESOURCE_BODY_BYTES)),
  request: {
    params: RuleIdParams,
    body: { required: true, content: { "application/json": { schema: UpdateRuleSchema } } },
  },
  responses: {
    200: envelope(RuleSchema, "The updated rule."),
    413: problemDoc(`The body exceeds ${RESOURCE_BODY_BYTES} bytes.`),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { alertId } = c.req.valid("param");
    const project = c.get("project");
    const patch = c.req.valid("json");
    const rule = await c.get("db").transaction(async (tx) => {
      const current = await loadRule(tx, project.id, alertId);
      if (patch.isActive === true && !current.isActive) {
        await assertActiveRuleQuota(tx, project.tenantId);
      }
      const bundle = requestedBundle(patch);
      const next = { ...current, ...patch };
      await validateReferences(tx, project.id, {
        ...next,
        thresholdProfileIds: bundle ?? current.thresholdProfileIds,
      });
      await tx
        .update(alertRules)
        .set({
          name: next.name,
          mapId: next.mapId,
          metric: next.metric,
          thresholdLevel: next.thresholdLevel,
          failPercentage: next.failPercentage,
          evaluationDays: next.evaluationDays,
          cellSize: next.cellSize,
          cooldownMinutes: next.cooldownMinutes,
          isActive: next.isActive,
          updatedAt: sql`now()`,
        })
        .where(and(eq(alertRules.id, alertId), eq(alertRules.projectId, project.id)));
      if (bundle) {
        await writeBundle(tx, alertId, bundle);
      }
      if (patch.channelIds) {
        await writeChannels(tx, alertId, patch.channelIds);
      }
      // Pausing and resuming are told apart from other edits: they decide whether anyone is paged.
      const action =
        current.isActive === next.isActive
          ? "alert_rule.updated"
          : next.isActive
            ? "alert_rule.reactivated"
            : "alert_rule.deactivated";
      await auditResource(c, project, action, { id: alertId, name: next.name }, tx, {
        fields: fieldsOf(patch),
      });
      return loadRule(tx, project.id, alertId);
    });
    return c.json({ success: true as const, data: detailOf(rule) }, 200);
  });
}
