import { html } from "hono/html";
import { type Html, layout } from "./layout.js";

// The pages a visitor opens before (or instead of) signing in: sign-up, its verification, password
// reset and invitations. One card each, like the sign-in page.

export function cardPage(opts: { title: string; error?: string; notice?: string; body?: Html }): Html {
  const body = html`<div class="card">
    <h1>${opts.title}</h1>
    ${opts.error ? html`<p class="error" role="alert">${opts.error}</p>` : ""}
    ${opts.notice ? html`<p class="notice" role="status">${opts.notice}</p>` : ""}
    ${opts.body ?? ""}
  </div>`;
  return layout({ title: opts.title, body });
}

export const LINK_DEAD =
  "This link has expired, was already used, or was replaced by a newer one. Ask for a new one.";

/** A mail that could not be sent: nothing is lost, the visitor can send the form again. */
export const MAIL_FAILED = "We could not send the mail just now. Nothing is lost: try again in a minute.";
