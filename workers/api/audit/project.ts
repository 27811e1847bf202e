import type { Context } from "hono";
import type { AuditDetail } from "../../../schema/pg/columns.js";
import type { ProjectRow } from "../../../schema/pg/schema.js";
import type { AppEnv } from "../context.js";
import type { Db } from "../db.js";
import { type AuditAction, type AuditInput, audit } from "./record.js";

/**
 * Records one entry about a change inside `project` (an alert rule, a profile, a channel, an erasure, an
 * export, a map): the studio and project come from the project row, whoever the actor is (a key, a
 * session, an OAuth token). `db` is the change's transaction when it has one.
 */
export function auditInProject<E extends AppEnv>(
  c: Context<E>,
  project: Pick<ProjectRow, "id" | "tenantId">,
  input: Omit<AuditInput, "tenantId" | "projectId">,
  db?: Db,
): Promise<void> {
  return audit(c, { ...input, tenantId: project.tenantId, projectId: project.id }, db);
}

/**
 * Records one entry about a named resource of `project` (a rule, a profile, a channel, a map) in the
 * change's transaction `db`: the target's type is the action's noun (`channel.deleted` → `channel`), its
 * label the resource's name as it is now.
 */
export function auditResource<E extends AppEnv>(
  c: Context<E>,
  project: Pick<ProjectRow, "id" | "tenantId">,
  action: AuditAction,
  resource: { id: string; name: string },
  db: Db,
  detail?: AuditDetail,
): Promise<void> {
  const type = action.slice(0, action.indexOf("."));
  return auditInProject(
    c,
    project,
    { action, target: { type, id: resource.id, label: resource.name }, detail },
    db,
  );
}

/** The names of the fields a partial update sent, for an entry's detail ("name,metric"). */
export function fieldsOf(patch: object): string {
  return Object.keys(patch).sort().join(",");
}
