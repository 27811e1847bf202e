import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { alertRules } from "../../../../schema/pg/schema.js";
import { assertActiveRuleQuota } from "../../alerts/quota.js";
import { detailOf, loadRule, writeBundle, writeChannels } from "../../alerts/rules.js";
import { validateReferences } from "../../alerts/validate.js";
import { auditResource } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { bodyUpTo, RESOURCE_BODY_BYTES } from "../../middleware/body-limits.js";
import { envelope, errorResponses, ProjectIdParam, policy, problemDoc } from "../../openapi.js";
import { CreateRuleSchema, RuleSchema, requestedBundle } from "./schema.js";

export const route = createRoute({
  method: "post",
  path: "/v1/projects/{id}/alerts",
  operationId: "createAlertRule",
  tags: ["Alerts"],
  summary: "Create an alert rule (active)",
  description:
    "403 when the plan has no alerting or is at its maximum of active rules. The map, every profile " +
    "and every channel must belong to the project, and every profile must define the threshold of the " +
    "rule's metric at its level.",
  ...policy({ scope: "resources:write", project: "path" }, bodyUpTo(RESOURCE_BODY_BYTES)),
  request: {
    params: ProjectIdParam,
    body: { required: true, content: { "application/json": { schema: CreateRuleSchema } } },
  },
  responses: {
    201: envelope(RuleSchema, "The new rule."),
    413: problemDoc(`The body exceeds ${RESOURCE_BODY_BYTES} bytes.`),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const project = c.get("project");
    const body = c.req.valid("json");
    const bundle = requestedBundle(body) ?? [];
    const channelIds = body.channelIds ?? [];
    const rule = await c.get("db").transaction(async (tx) => {
      // The caller's tenant: projectFromPath let through only a project of it.
      await assertActiveRuleQuota(tx, project.tenantId);
      await validateReferences(tx, project.id, {
        ...body,
        thresholdProfileIds: bundle,
        channelIds,
        isActive: true,
      });
      const [row] = await tx
        .insert(alertRules)
        .values({
          projectId: project.id,
          name: body.name,
          mapId: body.mapId,
          metric: body.metric,
          thresholdLevel: body.thresholdLevel,
          failPercentage: body.failPercentage,
          evaluationDays: body.evaluationDays,
          cellSize: body.cellSize,
          cooldownMinutes: body.cooldownMinutes,
        })
        .returning({ id: alertRules.id });
      if (!row) {
        throw new Error("rule insert returned no row");
      }
      await writeBundle(tx, row.id, bundle);
      await writeChannels(tx, row.id, channelIds);
      await auditResource(c, project, "alert_rule.created", { id: row.id, name: body.name }, tx, {
        metric: body.metric,
        thresholdLevel: body.thresholdLevel,
        mapId: body.mapId,
      });
      return loadRule(tx, project.id, row.id);
    });
    return c.json({ success: true as const, data: detailOf(rule) }, 201);
  });
}
