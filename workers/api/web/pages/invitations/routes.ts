import { eq } from "drizzle-orm";
import type { Context, Hono } from "hono";
import { html } from "hono/html";
import { tenants } from "../../../../../schema/pg/schema.js";
import { liveLink } from "../../../accounts/links.js";
import { acceptInvitation, userByEmail } from "../../../accounts/team.js";
import { AccountError } from "../../../accounts/users.js";
import type { AppEnv } from "../../../context.js";
import { cardPage, LINK_DEAD } from "../../card.js";
import { readForm } from "../../form.js";
import type { Html } from "../../layout.js";
import { csrfToken, csrfValid, currentUser } from "../../session.js";
import { signInAs } from "../../sign-in-as.js";
import { ACCEPT_PATH } from "../members/invitations.js";

type Invitation = { token: string; email: string; tenantName: string; role: string; newUser: boolean };

function acceptPage(csrf: string, inv: Invitation, error?: string): Html {
  const role = inv.role === "owner" ? "an owner" : "a member";
  return cardPage({
    title: `Join ${inv.tenantName}`,
    error,
    body: html`<p>You are invited to <strong>${inv.tenantName}</strong> as ${role}, as <strong>${inv.email}</strong>.</p>
      <form method="post" action="${ACCEPT_PATH}">
        <input type="hidden" name="csrf" value="${csrf}" />
        <input type="hidden" name="token" value="${inv.token}" />
        ${
          inv.newUser
            ? html`<label for="name">Your name</label>
                <input id="name" name="name" autocomplete="name" maxlength="100" />
                <label for="password">Choose a password</label>
                <input id="password" name="password" type="password" autocomplete="new-password" required minlength="8" maxlength="1024" />`
            : ""
        }
        <p><button type="submit">Accept invitation</button></p>
      </form>`,
  });
}

async function invitationFor(c: Context<AppEnv>, token: string): Promise<Invitation | null> {
  const db = c.get("db");
  const link = await liveLink(db, "invitation", token);
  if (!link?.tenantId || !link.role) {
    return null;
  }
  const [tenant] = await db.select({ name: tenants.name }).from(tenants).where(eq(tenants.id, link.tenantId));
  return {
    token,
    email: link.email,
    tenantName: tenant?.name ?? "",
    role: link.role,
    newUser: !(await userByEmail(db, link.email)),
  };
}

const dead = (c: Context<AppEnv>) => c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);

// The invitation link proves the email. Someone new chooses a password and is signed in; an existing
// user joins and then signs in as usual (the link alone never signs into an existing account).
export function register(app: Hono<AppEnv>) {
  app.get(ACCEPT_PATH, async (c) => {
    const inv = await invitationFor(c, c.req.query("token") ?? "");
    return inv ? c.html(acceptPage(await csrfToken(c), inv)) : dead(c);
  });

  app.post(ACCEPT_PATH, async (c) => {
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
    if (accepted.created) {
      await signInAs(c, accepted.userId);
      return c.redirect("/", 303);
    }
    const user = await currentUser(c);
    return c.redirect(user?.userId === accepted.userId ? "/" : "/sign-in?done=joined", 303);
  });
}
