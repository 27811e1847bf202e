import type { Hono } from "hono";
import { announceKeyChange } from "../../../../shared/credentials/key-replica.js";
import { removeMember } from "../../../accounts/team.js";
import { audit, userLabel } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { KeysNotTheirs } from "../../../credentials/key-management.js";
import { csrfForm, userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { renderMembers } from "./get.js";
import { changeMember, UUID } from "./member-change.js";
import { membersPath, REVOKE_FIELD } from "./view.js";

export function register(app: Hono<AppEnv>) {
  app.post(
    "/settings/studios/:tenantId/members/:userId/remove",
    visitor,
    userTenant,
    csrfForm("Member not removed"),
    async (c) => {
      const membership = c.get("membership");
      const userId = c.req.param("userId");
      const self = userId === c.get("visitor").user.userId;
      // Owners remove anyone; a member may only leave.
      if (membership.role !== "owner" && !self) {
        await audit(c, {
          action: "member.removed",
          outcome: "denied",
          tenantId: membership.tenantId,
          target: { type: "user", id: userId, label: await userLabel(c.get("db"), userId) },
        });
        return errorPage(c, 403, "Member not removed", "Only an owner of the studio can remove members.");
      }
      // The keys ticked on the confirmation page (remove-get.ts), one field each.
      const keyIds = Object.keys(c.get("form"))
        .filter((name) => name.startsWith(REVOKE_FIELD))
        .map((name) => name.slice(REVOKE_FIELD.length));
      if (keyIds.some((id) => !UUID.test(id))) {
        return renderMembers(c, { status: 400, error: new KeysNotTheirs().message });
      }
      let keys: { keyProjectIds: string[]; keysRevoked: number } | null = null;
      try {
        const refused = await changeMember(c, userId, async (db, tenantId, id) => {
          keys = await removeMember(db, tenantId, id, keyIds, async (tx, revokedKeys) => {
            const label = await userLabel(tx, id);
            await audit(
              c,
              {
                action: "member.removed",
                tenantId,
                target: { type: "user", id, label },
                detail: { left: self },
              },
              tx,
            );
            // One entry per key revoked with the removal, in its transaction.
            for (const key of revokedKeys) {
              await audit(
                c,
                {
                  action: "key.revoked",
                  tenantId,
                  projectId: key.projectId,
                  target: { type: "key", id: key.id, label: key.name ?? `${key.prefix}…` },
                  detail: { reason: "member_removed", creator: label },
                },
                tx,
              );
            }
          });
          return keys !== null;
        });
        if (refused) {
          return refused;
        }
      } catch (err) {
        if (err instanceof KeysNotTheirs) {
          return renderMembers(c, { status: 400, error: err.message });
        }
        throw err;
      }
      const revoked: { keyProjectIds: string[]; keysRevoked: number } = keys ?? {
        keyProjectIds: [],
        keysRevoked: 0,
      };
      if (revoked.keyProjectIds.length) {
        // The revoked keys are refused from the next request on, on every isolate and by the replica.
        await announceKeyChange(c.env, c.get("config"), {
          tenantId: membership.tenantId,
          projectIds: revoked.keyProjectIds,
        });
      }
      const done = revoked.keysRevoked ? "removed-keys" : "removed";
      return c.redirect(self ? "/" : `${membersPath(membership.tenantId)}?done=${done}`, 303);
    },
  );
}
