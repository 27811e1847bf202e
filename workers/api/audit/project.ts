import type { Context } from "hono";
import type { ProjectRow } from "../../../schema/pg/schema.js";
import type { AppEnv } from "../context.js";
import type { Db } from "../db.js";
import { type AuditInput, audit } from "./record.js";

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

/** The names of the fields a partial update sent, for an entry's detail ("name,metric"). */
export function fieldsOf(patch: object): string {
  return Object.keys(patch).sort().join(",");
}
