import type { Hono } from "hono";
import { acceptInvitation } from "../../../accounts/team.js";
import { AccountError } from "../../../accounts/users.js";
import { audit } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { readForm } from "../../form.js";
import { csrfToken, csrfValid, currentUser } from "../../session.js";
import { signInAs } from "../../sign-in-as.js";
import { invitationFor } from "./accept-get.js";
import { acceptPage, dead } from "./view.js";

// The invitation link proves the email. Someone new chooses a password and is signed in; an existing
// user joins and then signs in as usual (the link alone never signs into an existing account).
export function register(app: Hono<AppEnv>) {
  app.post("/invitations/accept", async (c) => {
    const form = await readForm(c);
    const inv = await invitationFor(c, form?.token ?? "");
    if (!inv) {
      return dead(c);
    }
    if (!form || !(await csrfValid(c, form.csrf))) {
      return c.html(acceptPage(await csrfToken(c), inv, "This form has expired. Send it again."), 403);
    }
    let accepted: Awaited<ReturnType<typeof acceptInvitation>>;
    try {
      accepted = await acceptInvitation(
        c.get("db"),
        inv.token,
        inv.newUser ? { password: form.password ?? "", name: (form.name ?? "").trim() } : undefined,
      );
    } catch (err) {
      if (err instanceof AccountError) {
        return c.html(acceptPage(await csrfToken(c), inv, err.message), 400);
      }
      throw err;
    }
    if (!accepted) {
      return dead(c);
    }
    await audit(c, {
      action: "invitation.accepted",
      tenantId: accepted.tenantId,
      actor: { type: "user", id: accepted.userId, label: inv.email, userId: accepted.userId },
      target: { type: "user", id: accepted.userId, label: inv.email },
      detail: { newAccount: accepted.created },
    });
    if (accepted.created) {
      await signInAs(c, accepted.userId);
      return c.redirect("/", 303);
    }
    const user = await currentUser(c);
    return c.redirect(user?.userId === accepted.userId ? "/" : "/sign-in?done=joined", 303);
  });
}
