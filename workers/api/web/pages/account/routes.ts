import type { Context, Hono } from "hono";
import { html } from "hono/html";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { announceChange } from "../../../../shared/credentials/cache.js";
import { accountOf, changePassword, deleteAccount, setName } from "../../../accounts/account.js";
import { AccountError } from "../../../accounts/users.js";
import type { AppEnv } from "../../../context.js";
import { csrfForm, type PageEnv, visitor } from "../../access.js";
import { type Html, layout, type NavUser } from "../../layout.js";
import { clearSessionCookie } from "../../session.js";

export const ACCOUNT_PATH = "/settings/account";

const NOTICES: Record<string, string> = {
  name: "Name saved.",
  password: "Password changed. Your other sessions are signed out.",
};

function accountPage(v: {
  nav: NavUser;
  csrf: string;
  email: string;
  name: string;
  notice?: string;
  error?: string;
}): Html {
  const body = html`<h1>Your account</h1>
    ${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ""}
    ${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ""}
    <p>Signed in as <strong>${v.email}</strong>.</p>
    <h2>Name</h2>
    <form method="post" action="${ACCOUNT_PATH}/name">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label for="name">Name</label>
      <input id="name" name="name" autocomplete="name" maxlength="100" value="${v.name}" />
      <p><button type="submit">Save name</button></p>
    </form>
    <h2>Password</h2>
    <form method="post" action="${ACCOUNT_PATH}/password">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label for="current">Current password</label>
      <input id="current" name="current" type="password" autocomplete="current-password" required maxlength="1024" />
      <label for="next">New password</label>
      <input id="next" name="next" type="password" autocomplete="new-password" required minlength="8" maxlength="1024" />
      <p><button type="submit">Change password</button></p>
    </form>
    <h2>Delete account</h2>
    <p>Ends your sessions and connected apps and removes you from every studio. Refused while you are a studio's last owner.</p>
    <form method="post" action="${ACCOUNT_PATH}/delete">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label for="delete-password">Password</label>
      <input id="delete-password" name="password" type="password" autocomplete="current-password" required maxlength="1024" />
      <p><button type="submit">Delete my account</button></p>
    </form>`;
  return layout({ title: "Your account", user: v.nav, body });
}

async function render(c: Context<PageEnv>, opts: { status?: ContentfulStatusCode; error?: string } = {}) {
  const { nav, csrf, user } = c.get("visitor");
  const account = await accountOf(c.get("db"), user.userId);
  const notice = NOTICES[c.req.query("done") ?? ""];
  return c.html(
    accountPage({ nav, csrf, email: user.email, name: account?.name ?? "", notice, error: opts.error }),
    opts.status ?? 200,
  );
}

/** Runs a change; an AccountError (a wrong password, a rule) is the page again with the reason, 400. */
async function attempt(c: Context<PageEnv>, change: () => Promise<Response>): Promise<Response> {
  try {
    return await change();
  } catch (err) {
    if (err instanceof AccountError) {
      return render(c, { status: 400, error: err.message });
    }
    throw err;
  }
}

export function register(app: Hono<AppEnv>) {
  app.get(ACCOUNT_PATH, visitor, (c) => render(c));

  app.post(`${ACCOUNT_PATH}/name`, visitor, csrfForm("Name not saved"), (c) =>
    attempt(c, async () => {
      await setName(c.get("db"), c.get("visitor").user.userId, c.get("form").name ?? "");
      return c.redirect(`${ACCOUNT_PATH}?done=name`, 303);
    }),
  );

  app.post(`${ACCOUNT_PATH}/password`, visitor, csrfForm("Password not changed"), (c) =>
    attempt(c, async () => {
      const { user } = c.get("visitor");
      const form = c.get("form");
      await changePassword(c.get("db"), {
        userId: user.userId,
        sessionId: user.sessionId,
        current: (form.current ?? "").slice(0, 1024),
        next: form.next ?? "",
      });
      return c.redirect(`${ACCOUNT_PATH}?done=password`, 303);
    }),
  );

  app.post(`${ACCOUNT_PATH}/delete`, visitor, csrfForm("Account not deleted"), (c) =>
    attempt(c, async () => {
      const tenants = await deleteAccount(
        c.get("db"),
        c.get("visitor").user.userId,
        (c.get("form").password ?? "").slice(0, 1024),
      );
      for (const tenantId of tenants) {
        await announceChange(c.env, { tenantId });
      }
      clearSessionCookie(c);
      return c.redirect("/sign-in", 303);
    }),
  );
}
