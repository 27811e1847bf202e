import { html } from "hono/html";
import type { SsoConnectionRow, SsoDomainProofRow } from "../../../../../schema/pg/schema.js";
import type { TenantMembership } from "../../../accounts/team.js";
import { recordName, recordValue } from "../../../sso/domains.js";
import { dateCell, type Html, layout, type NavUser } from "../../layout.js";
import { type BreakGlassCandidate, enforcementSection } from "./enforcement-view.js";

export function ssoPath(tenantId: string): string {
  return `/settings/studios/${tenantId}/sso`;
}

/** What the form holds when it is shown again after a refusal (never the secret). */
export type SsoForm = { issuer: string; clientId: string; domains: string; defaultRole: string };

export type SsoView = {
  nav: NavUser;
  csrf: string;
  membership: TenantMembership;
  callbackUrl: string;
  active: SsoConnectionRow | null;
  pending: SsoConnectionRow | null;
  /** The DNS proof of each domain the active or pending configuration names. */
  proofs?: SsoDomainProofRow[];
  form?: SsoForm;
  error?: string;
  notice?: string;
  /** The studio's owners, for the break-glass choice (enforcement-view.ts). */
  owners?: BreakGlassCandidate[];
};

/** Words for the reasons a test sign-in or a sign-in was refused (flow.ts FlowRefusal). */
export const REFUSAL_WORDS: Record<string, string> = {
  state_missing: "the provider's answer carried no state",
  state_unknown: "the sign-in request is unknown here",
  state_replayed: "this sign-in answer was already used",
  state_expired: "the sign-in took longer than 10 minutes",
  browser_mismatch: "the sign-in was started in another browser",
  email_missing: "the provider gave no email address",
  email_unverified: "the provider did not say the email address is verified (email_verified)",
  email_domain: "the email address is not in one of the studio's domains",
  account_elsewhere: "an account with this email exists and is not a member of the studio",
  domain_taken: "one of the domains now signs in with another studio",
  configuration_replaced: "the configuration was changed or removed meanwhile",
  account_mismatch: "the provider signed in another person than the one signed in here",
  not_owner: "only an owner of the studio can test its configuration",
  provider_error: "the provider refused the sign-in",
  issuer: "the ID token's issuer is not the configured one",
  audience: "the ID token was issued for another client",
  nonce: "the ID token's nonce does not match this sign-in",
  expired: "the ID token has expired",
  signature: "the ID token's signature does not verify with the provider's keys",
  token_request: "the provider refused the code exchange (check the client id and secret)",
  provider_unreachable: "the provider could not be reached",
  invalid_response: "the provider's answer was not valid",
};

function connectionTable(row: SsoConnectionRow): Html {
  return html`<table>
    <tbody>
      <tr><th scope="row">Issuer URL</th><td><code>${row.issuer}</code></td></tr>
      <tr><th scope="row">Client ID</th><td><code>${row.clientId}</code></td></tr>
      <tr><th scope="row">Client secret</th><td>Stored encrypted; never shown again</td></tr>
      <tr><th scope="row">Email domains</th><td>${row.domains.join(", ")}</td></tr>
      <tr><th scope="row">Role of new members</th><td>${row.defaultRole === "owner" ? "Owner" : "Member"}</td></tr>
      <tr><th scope="row">Last successful test</th><td>${
        row.testedAt ? html`${dateCell(row.testedAt)} as ${row.testedAs ?? ""}` : "Never"
      }</td></tr>
    </tbody>
  </table>`;
}

/**
 * Each domain's DNS record and whether it is verified: only a verified domain sends sign-ins to the
 * provider. "Verify" looks the record up now.
 */
function domainsSection(base: string, csrf: string, proofs: SsoDomainProofRow[]): Html {
  if (proofs.length === 0) {
    return html``;
  }
  return html`<h2>Domain ownership</h2>
    <p>A domain sends sign-ins to the provider only after the studio proves it owns it: publish this TXT
      record in the domain's DNS, then press Verify. Until then, people with an address in it sign in with
      a password.</p>
    <table id="sso-domains">
      <caption>Email domains and their DNS records</caption>
      <thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">TXT record name</th><th scope="col">TXT record value</th><th scope="col">Actions</th></tr></thead>
      <tbody>${proofs.map(
        (p) => html`<tr>
          <td>${p.domain}</td>
          <td>${p.verifiedAt ? html`Verified ${dateCell(p.verifiedAt)}` : html`<strong>Not verified</strong>${p.checkedAt ? html` (record not found ${dateCell(p.checkedAt)})` : ""}`}</td>
          <td><code>${recordName(p.domain)}</code></td>
          <td><code>${recordValue(p.token)}</code></td>
          <td>
            <form method="post" action="${base}/verify">
              <input type="hidden" name="csrf" value="${csrf}" />
              <input type="hidden" name="domain" value="${p.domain}" />
              <button type="submit" aria-label="Verify ${p.domain}">Verify</button>
            </form>
          </td>
        </tr>`,
      )}</tbody>
    </table>`;
}

export function ssoPage(v: SsoView): Html {
  const base = ssoPath(v.membership.tenantId);
  const source = v.form ?? {
    issuer: v.pending?.issuer ?? v.active?.issuer ?? "",
    clientId: v.pending?.clientId ?? v.active?.clientId ?? "",
    domains: (v.pending?.domains ?? v.active?.domains ?? []).join(", "),
    defaultRole: v.pending?.defaultRole ?? v.active?.defaultRole ?? "member",
  };
  const hasSecret = Boolean(v.pending ?? v.active);
  const proofs = v.proofs ?? [];
  const unproven = (v.active?.domains ?? []).filter(
    (d) => !proofs.some((p) => p.domain === d && p.verifiedAt),
  );
  const body = html`<p><a href="/">Projects</a> › ${v.membership.tenantName}</p>
    <h1>Single sign-on for ${v.membership.tenantName}</h1>
    <p>People with an email address in the studio's domains sign in with the studio's identity provider
      (OpenID Connect). The first time, they join the studio with the role below.</p>
    ${v.error ? html`<p class="error" role="alert">${v.error}</p>` : ""}
    ${v.notice ? html`<p class="notice" role="status">${v.notice}</p>` : ""}
    ${
      unproven.length > 0
        ? html`<p class="error" id="sso-unverified" role="alert">Not verified: ${unproven.join(", ")}. Sign-ins
            with ${unproven.length === 1 ? "this domain do" : "these domains do"} not go to your provider until
            you publish the DNS record below and press Verify.</p>`
        : ""
    }
    <h2>Callback URL</h2>
    <p>Register this redirect URI at the provider for the studio's client:</p>
    <p><code id="callback-url">${v.callbackUrl}</code></p>
    <h2>Current configuration</h2>
    ${v.active ? connectionTable(v.active) : html`<p>Single sign-on is not set up: everyone signs in with a password.</p>`}
    ${
      v.active
        ? html`<form method="post" action="${base}/remove">
            <input type="hidden" name="csrf" value="${v.csrf}" />
            <button type="submit">Remove single sign-on</button>
          </form>`
        : ""
    }
    ${domainsSection(base, v.csrf, proofs)}
    ${v.active ? enforcementSection({ base, csrf: v.csrf, active: v.active, owners: v.owners ?? [] }) : ""}
    ${
      v.pending
        ? html`<h2>Waiting for a test sign-in</h2>
            <p>This configuration is saved only after a successful test sign-in at the provider.</p>
            ${connectionTable(v.pending)}
            <form method="post" action="${base}/test">
              <input type="hidden" name="csrf" value="${v.csrf}" />
              <button type="submit">Test sign-in</button>
            </form>`
        : ""
    }
    <h2>${v.active ? "Change the configuration" : "Set up"}</h2>
    <form method="post" action="${base}">
      <input type="hidden" name="csrf" value="${v.csrf}" />
      <label for="sso-issuer">Issuer URL</label>
      <input id="sso-issuer" name="issuer" type="url" required maxlength="500" value="${source.issuer}" placeholder="https://accounts.google.com" />
      <label for="sso-client-id">Client ID</label>
      <input id="sso-client-id" name="clientId" required maxlength="255" value="${source.clientId}" autocomplete="off" />
      <label for="sso-client-secret">Client secret</label>
      <input id="sso-client-secret" name="clientSecret" type="password" maxlength="1024" autocomplete="off" ${hasSecret ? "" : "required"} placeholder="${hasSecret ? "Leave empty to keep the stored secret" : ""}" />
      <label for="sso-domains">Email domains</label>
      <input id="sso-domains" name="domains" required maxlength="2000" value="${source.domains}" placeholder="studio.com, studio.dev" />
      <label for="sso-role">Role of new members</label>
      <select id="sso-role" name="defaultRole">
        <option value="member" ${source.defaultRole === "member" ? "selected" : ""}>Member</option>
        <option value="owner" ${source.defaultRole === "owner" ? "selected" : ""}>Owner</option>
      </select>
      <p><button type="submit">Test sign-in and save</button></p>
    </form>`;
  return layout({ title: `Single sign-on · ${v.membership.tenantName}`, user: v.nav, body });
}
