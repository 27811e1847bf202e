import type { Hono } from "hono";
import { membersOf } from "../../../accounts/team.js";
import type { AppEnv } from "../../../context.js";
import { liveKeysCreatedBy } from "../../../credentials/key-management.js";
import { userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { removeConfirmPage } from "./view.js";

// Removing a member is asked first: the page names them and lists the live API keys they created in the
// studio's projects, each ticked, so the owner revokes them with the removal unless they untick one.
// The GET changes nothing; the form posts to …/remove (member-remove.ts).
export function register(app: Hono<AppEnv>) {
  app.get("/settings/studios/:tenantId/members/:userId/remove", visitor, userTenant, async (c) => {
    const membership = c.get("membership");
    const { nav, csrf, user } = c.get("visitor");
    const userId = c.req.param("userId");
    if (membership.role !== "owner" && userId !== user.userId) {
      return errorPage(c, 403, "Member not removed", "Only an owner of the studio can remove members.");
    }
    const db = c.get("db");
    const member = (await membersOf(db, membership.tenantId)).find((m) => m.userId === userId);
    if (!member) {
      return errorPage(c, 404, "Not found", "No such member of this studio.");
    }
    const keys = await liveKeysCreatedBy(db, membership.tenantId, member.userId);
    return c.html(removeConfirmPage({ nav, csrf, membership, member, keys, self: userId === user.userId }));
  });
}
