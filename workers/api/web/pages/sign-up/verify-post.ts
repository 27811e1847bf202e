import type { Hono } from "hono";
import { verifySignup } from "../../../accounts/account.js";
import { liveLink } from "../../../accounts/links.js";
import type { AppEnv } from "../../../context.js";
import { cardPage, LINK_DEAD } from "../../card.js";
import { readForm } from "../../form.js";
import { errorPage } from "../../respond.js";
import { csrfValid } from "../../session.js";
import { signInAs } from "../../sign-in-as.js";

export function register(app: Hono<AppEnv>) {
  app.post("/sign-up/verify", async (c) => {
    const form = await readForm(c);
    const db = c.get("db");
    if (!(await liveLink(db, "signup", form?.token ?? ""))) {
      return c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);
    }
    if (!form || !(await csrfValid(c, form.csrf))) {
      return errorPage(c, 403, "Not confirmed", "This form has expired. Open the link from the mail again.");
    }
    const created = await verifySignup(db, form.token ?? "");
    if (!created) {
      return c.html(cardPage({ title: "Link not valid", error: LINK_DEAD }), 410);
    }
    await signInAs(c, created.userId);
    return c.redirect("/", 303);
  });
}
