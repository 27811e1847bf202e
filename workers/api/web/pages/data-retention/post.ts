import type { Hono } from "hono";
import { audit } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { changeDataRetention, dataRetentionProblem } from "../../../data-retention/change.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { renderDataRetention, studioRetention } from "./get.js";
import { retentionPath } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/retention",
    visitor,
    userTenant,
    csrfForm("Retention not changed"),
    async (c) => {
      const membership = c.get("membership");
      if (membership.role !== "owner") {
        await audit(c, {
          action: "studio.retention_changed",
          outcome: "denied",
          tenantId: membership.tenantId,
          target: { type: "studio", id: membership.tenantId, label: membership.tenantName },
        });
        return errorPage(
          c,
          403,
          "Retention not changed",
          "Only an owner of the studio can change its retention.",
        );
      }
      const typed = (c.get("form").retentionDays ?? "").trim();
      const days = typed === "" ? null : /^\d{1,5}$/.test(typed) ? Number(typed) : Number.NaN;
      const { planId } = await studioRetention(c);
      const problem = dataRetentionProblem(planId, days);
      if (problem !== null) {
        return renderDataRetention(c, {
          status: 400,
          error: `Days to keep: ${problem}.`,
          draft: typed.slice(0, 20),
        });
      }
      await changeDataRetention(c, membership.tenantId, planId, days);
      return c.redirect(`${retentionPath(membership.tenantId)}?done=saved`, 303);
    },
  );
}
