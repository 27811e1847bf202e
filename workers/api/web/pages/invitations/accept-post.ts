import type { Hono } from "hono";
import { acceptInvitation } from "../../../accounts/team.js";
import { AccountError } from "../../../accounts/users.js";
import { audit } from "../../../audit/record.js";
import type { AppEnv } from "../../../context.js";
import { clearSessionCookie, currentUser } from "../../../credentials/session-cookie.js";
import { endSession } from "../../../credentials/sessions.js";
import { ssoRequiredFor } from "../../../sso/enforcement.js";
import { readForm } from "../../form.js";
import { csrfToken, csrfValid } from "../../session.js";
import { signInAs } from "../../sign-in-as.js";
import { invitationFor, otherUser } from "./accept-get.js";
import { acceptPage, CONFIRM_FIELD, dead } from "./view.js";

// The invitation link proves the email. Someone new chooses a password and is signed in; an existing
// user joins and then signs in as usual (the link alone never signs into an existing account).
// A browser signed in as someone else is asked first (the page says who is signed in and who was
// invited): the post must carry that person's id as shown on the page, else nothing changes and the
// question is asked again (409). Confirmed, that person is signed out of this browser.
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
    const other = await otherUser(c, inv);
    if (other && form[CONFIRM_FIELD] !== other.userId) {
      return c.html(
        acceptPage(
          await csrfToken(c),
          inv,
          "This browser is signed in as someone else. Read below and accept again.",
          other,
        ),
        409,
      );
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
        return c.html(acceptPage(await csrfToken(c), inv, err.message, other), 400);
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
    // Under a studio that requires single sign-on, a new member signs in with its provider, not here.
    if (accepted.created && (await ssoRequiredFor(c.get("db"), accepted.userId)).length === 0) {
      await signInAs(c, accepted.userId);
      return c.redirect("/", 303);
    }
    const user = await currentUser(c);
    if (other && user) {
      await endSession(c.get("db"), user.sessionId);
      clearSessionCookie(c);
      return c.redirect("/sign-in?done=joined", 303);
    }
    return c.redirect(
      user?.userId === accepted.userId && !accepted.created ? "/" : "/sign-in?done=joined",
      303,
    );
  });
}
