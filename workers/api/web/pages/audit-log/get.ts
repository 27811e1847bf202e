import { eq } from "drizzle-orm";
import type { Hono } from "hono";
import { projects } from "../../../../../schema/pg/schema.js";
import { ApiError } from "../../../../shared/errors.js";
import { type AuditFilters, auditPage } from "../../../audit/read.js";
import type { AppEnv } from "../../../context.js";
import { userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { type AuditLogForm, auditLogPage, auditLogPath } from "./view.js";

const ACTION = /^[a-z_]+(\.[a-z_]+)*$/;
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;

/** A datetime-local value read as UTC; undefined when empty; a string naming the rule when invalid. */
function timeOf(value: string, field: string): Date | undefined | string {
  if (!value) {
    return undefined;
  }
  const d = new Date(`${value}Z`);
  return LOCAL_TIME.test(value) && !Number.isNaN(d.getTime())
    ? d
    : `${field}: a date and time (YYYY-MM-DDTHH:MM).`;
}

export function register(app: Hono<AppEnv>) {
  // Owners only: members get 403, other studios 404 (userTenant), as on the members page.
  app.get("/settings/studios/:tenantId/audit-log", visitor, userTenant, async (c) => {
    const membership = c.get("membership");
    if (membership.role !== "owner") {
      return errorPage(c, 403, "Audit log", "Only an owner of the studio can read its audit log.");
    }
    const db = c.get("db");
    const q = (name: string) => (c.req.query(name) ?? "").trim().slice(0, 320);
    const form: AuditLogForm = {
      actor: q("actor"),
      action: q("action"),
      project: q("project"),
      from: q("from"),
      to: q("to"),
    };
    const studioProjects = await db
      .select({ id: projects.id, name: projects.name })
      .from(projects)
      .where(eq(projects.tenantId, membership.tenantId))
      .orderBy(projects.name);
    const from = timeOf(form.from, "From");
    const to = timeOf(form.to, "To");
    const problems = [
      form.action && !ACTION.test(form.action) ? "Action: an action (key.created) or its noun (key)." : null,
      form.project && !studioProjects.some((p) => p.id === form.project)
        ? "Project: choose one of the list."
        : null,
      typeof from === "string" ? from : null,
      typeof to === "string" ? to : null,
    ].filter((p): p is string => p !== null);
    const view = { nav: c.get("visitor").nav, membership, projects: studioProjects, form };
    if (problems.length > 0) {
      return c.html(auditLogPage({ ...view, entries: [], next: null, error: problems.join(" ") }), 400);
    }
    const filters: AuditFilters = {
      actor: form.actor || undefined,
      action: form.action || undefined,
      projectId: form.project || undefined,
      from: from instanceof Date ? from : undefined,
      to: to instanceof Date ? to : undefined,
      cursor: c.req.query("cursor") || undefined,
    };
    let page: Awaited<ReturnType<typeof auditPage>>;
    try {
      page = await auditPage(db, membership.tenantId, filters);
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) {
        return c.html(
          auditLogPage({ ...view, entries: [], next: null, error: "That page link is not valid." }),
          400,
        );
      }
      throw err;
    }
    const next = page.nextCursor
      ? `${auditLogPath(membership.tenantId)}?${new URLSearchParams({
          ...Object.fromEntries(Object.entries(form).filter(([, v]) => v)),
          cursor: page.nextCursor,
        })}`
      : null;
    return c.html(auditLogPage({ ...view, entries: page.entries, next }));
  });
}
