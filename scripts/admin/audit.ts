// The admin CLI's audit entries: the operator acts outside any request, so each entry names the
// operator as actor and carries everything explicitly (docs/accounts.md, "Audit log").
import { auditOutside, OPERATOR_ACTOR } from "../../workers/api/audit/record.js";
import type { Db } from "../../workers/api/db.js";

/** What a command wrote, as its audit entry wants it; null for a command that records none here. */
export async function recordCommand(
  db: Db,
  command: string,
  values: Record<string, string | undefined>,
  result: unknown,
): Promise<void> {
  const id = typeof result === "object" && result !== null && "id" in result ? String(result.id) : null;
  const at = new Date();
  switch (command) {
    case "tenant create":
      // The plan (and with it the retention and limits) is set here; nothing else changes it today.
      await auditOutside(db, {
        tenantId: id,
        actor: OPERATOR_ACTOR,
        action: "tenant.created",
        target: { type: "tenant", id, label: values.name ?? null },
        detail: { plan: values.plan ?? null },
        at,
      });
      return;
    case "project create":
      await auditOutside(db, {
        tenantId: values.tenant ?? null,
        projectId: id,
        actor: OPERATOR_ACTOR,
        action: "project.created",
        target: { type: "project", id, label: values.name ?? null },
        at,
      });
      return;
    default:
      return;
  }
}
