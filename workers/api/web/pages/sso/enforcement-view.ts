import { html } from "hono/html";
import type { SsoConnectionRow } from "../../../../../schema/pg/schema.js";
import type { Html } from "../../layout.js";

/** An owner of the studio who may be named break-glass (only those with a password can be). */
export type BreakGlassCandidate = { userId: string; email: string; hasPassword: boolean };

/**
 * "Require single sign-on" on the studio's single sign-on page (shown once a configuration is active):
 * the switch, the break-glass owner, and what turning it on does.
 */
export function enforcementSection(v: {
  base: string;
  csrf: string;
  active: SsoConnectionRow;
  owners: BreakGlassCandidate[];
}): Html {
  const current = v.active.breakGlassUserId;
  return html`<h2>Require single sign-on</h2>
    <p>${
      v.active.requireSso
        ? html`<strong>Required.</strong> Members sign in only with the provider; password sign-in, password reset and invitations outside ${v.active.domains.join(", ")} are refused.`
        : "Not required: members who have a password may still sign in with it."
    }</p>
    <p>Turning it on signs out every member's sessions that did not come from the provider (yours stays),
      revokes pending invitations to addresses outside the studio's domains, and refuses password sign-in
      and password reset for members. One owner, the break-glass account, keeps password sign-in for
      when the provider cannot sign anyone in. A sign-in with the provider lasts at most 12 hours, so a
      person disabled at the provider is signed out within 12 hours (end their sessions on the Members
      page to sign them out at once). Turning it off lets everyone who has a password sign in with it again.</p>
    <form method="post" action="${v.base}/enforcement">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label><input type="checkbox" id="sso-require" name="requireSso" value="1" ${v.active.requireSso ? "checked" : ""} />
        Require single sign-on for this studio's members</label>
      <label for="sso-break-glass">Break-glass owner (keeps password sign-in)</label>
      <select id="sso-break-glass" name="breakGlassUserId">
        <option value="" ${current ? "" : "selected"}>None</option>
        ${v.owners.map(
          (o) =>
            html`<option value="${o.userId}" ${o.userId === current ? "selected" : ""} ${o.hasPassword ? "" : "disabled"}>${o.email}${o.hasPassword ? "" : " (no password)"}</option>`,
        )}
      </select>
      <p><button type="submit">Save requirement</button></p>
    </form>`;
}
