import { eq } from "drizzle-orm";
import type { Context, Hono } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { tenants } from "../../../../../schema/pg/schema.js";
import type { PlanId } from "../../../../shared/plans.js";
import type { AppEnv } from "../../../context.js";
import { dataRetentionOf } from "../../../data-retention/horizon.js";
import { type PageEnv, userTenant, visitor } from "../../access.js";
import { retentionPage } from "./view.js";

/** The studio's plan and chosen retention, read now (not the minute-long cache of the reads). */
export async function studioRetention(
  c: Context<PageEnv>,
): Promise<{ planId: PlanId; chosen: number | null }> {
  const [row] = await c
    .get("db")
    .select({ planId: tenants.planId, chosen: tenants.retentionDays })
    .from(tenants)
    .where(eq(tenants.id, c.get("membership").tenantId))
    .limit(1);
  if (!row) {
    throw new Error("the membership's studio has no row");
  }
  return row;
}

export async function renderDataRetention(
  c: Context<PageEnv>,
  opts: { status?: ContentfulStatusCode; error?: string; draft?: string } = {},
) {
  const { nav, csrf } = c.get("visitor");
  const { planId, chosen } = await studioRetention(c);
  const notice = c.req.query("done") === "saved" ? "Retention saved." : undefined;
  const retention = dataRetentionOf(planId, chosen, c.get("now"));
  return c.html(
    retentionPage({ nav, csrf, membership: c.get("membership"), planId, retention, notice, ...opts }),
    opts.status ?? 200,
  );
}

export function register(app: Hono<AppEnv>) {
  // Every member reads it; only owners see the form (post.ts). Other studios: 404 (userTenant).
  app.get("/settings/studios/:tenantId/retention", visitor, userTenant, (c) => renderDataRetention(c));
}
