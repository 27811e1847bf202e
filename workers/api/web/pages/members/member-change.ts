import type { Context } from "hono";
import { announceChange } from "../../../../shared/credentials/cache.js";
import { AccountError } from "../../../accounts/users.js";
import type { Db } from "../../../db.js";
import type { PageEnv } from "../../access.js";
import { errorPage } from "../../respond.js";
import { renderMembers } from "./get.js";

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Applies `change` to the member `userId` of the signed-in member's studio and announces it, so the
 * member's cached tokens are judged anew from the next request on every isolate. Answers the page to
 * send instead when refused: 404 for no such member, the members page with the rule's message (409, e.g.
 * the last owner) for an AccountError; null when done.
 */
export async function changeMember(
  c: Context<PageEnv>,
  userId: string,
  change: (db: Db, tenantId: string, userId: string) => Promise<boolean>,
): Promise<Response | null> {
  const { tenantId } = c.get("membership");
  try {
    if (!UUID.test(userId) || !(await change(c.get("db"), tenantId, userId))) {
      return errorPage(c, 404, "Not found", "No such member of this studio.");
    }
  } catch (err) {
    if (err instanceof AccountError) {
      return renderMembers(c, { status: 409, error: err.message });
    }
    throw err;
  }
  await announceChange(c.env, { tenantId });
  return null;
}
