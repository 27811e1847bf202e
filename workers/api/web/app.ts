import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { ApiError, problemResponse } from "../../shared/errors.js";
import type { AppEnv } from "../context.js";
import { currentUser } from "../credentials/session-cookie.js";
import { init } from "../middleware/init.js";
import * as accountDelete from "./pages/account/delete.js";
import * as accountGet from "./pages/account/get.js";
import * as accountName from "./pages/account/name.js";
import * as accountPassword from "./pages/account/password.js";
import * as accountSessionEnd from "./pages/account/session-end.js";
import * as accountSessionsEndOthers from "./pages/account/sessions-end-others.js";
import * as apiKeysCreate from "./pages/api-keys/create.js";
import * as apiKeysGet from "./pages/api-keys/get.js";
import * as apiKeysRevoke from "./pages/api-keys/revoke.js";
import * as assetsGet from "./pages/assets/get.js";
import * as auditLogGet from "./pages/audit-log/get.js";
import * as connectedAppsGet from "./pages/connected-apps/get.js";
import * as connectedAppsRevoke from "./pages/connected-apps/revoke.js";
import * as dashboardGet from "./pages/dashboard/get.js";
import * as dataRetentionGet from "./pages/data-retention/get.js";
import * as dataRetentionPost from "./pages/data-retention/post.js";
import * as faviconGet from "./pages/favicon/get.js";
import * as homeGet from "./pages/home/get.js";
import * as invitationAcceptGet from "./pages/invitations/accept-get.js";
import * as invitationAcceptPost from "./pages/invitations/accept-post.js";
import * as membersGet from "./pages/members/get.js";
import * as membersInvitationResend from "./pages/members/invitation-resend.js";
import * as membersInvitationRevoke from "./pages/members/invitation-revoke.js";
import * as membersInvite from "./pages/members/invite.js";
import * as membersMemberRemove from "./pages/members/member-remove.js";
import * as membersMemberRole from "./pages/members/member-role.js";
import * as membersRemoveGet from "./pages/members/remove-get.js";
import * as membersSessionsEnd from "./pages/members/sessions-end.js";
import * as authorizeGet from "./pages/oauth/authorize-get.js";
import * as authorizePost from "./pages/oauth/authorize-post.js";
import * as metadata from "./pages/oauth/metadata.js";
import * as passwordResetConfirmGet from "./pages/password-reset/confirm-get.js";
import * as passwordResetConfirmPost from "./pages/password-reset/confirm-post.js";
import * as passwordResetGet from "./pages/password-reset/get.js";
import * as passwordResetPost from "./pages/password-reset/post.js";
import * as signInGet from "./pages/sign-in/get.js";
import * as signInPost from "./pages/sign-in/post.js";
import * as signOutPost from "./pages/sign-out/post.js";
import * as signUpGet from "./pages/sign-up/get.js";
import * as signUpPost from "./pages/sign-up/post.js";
import * as signUpVerifyGet from "./pages/sign-up/verify-get.js";
import * as signUpVerifyPost from "./pages/sign-up/verify-post.js";
import * as ssoCallback from "./pages/sso/callback.js";
import * as ssoEnforcement from "./pages/sso/enforcement.js";
import * as ssoGet from "./pages/sso/get.js";
import * as ssoRemove from "./pages/sso/remove.js";
import * as ssoSave from "./pages/sso/save.js";
import * as ssoTest from "./pages/sso/test.js";
import * as ssoVerify from "./pages/sso/verify.js";
import { errorPage } from "./respond.js";
import { signInRedirect } from "./session.js";

/**
 * Pages carry CSRF tokens, secrets shown once and a consent form: never cached, never framed (no
 * clickjacking of Allow), no scripts (but the dashboard's own bundle on dashboard pages), images only from
 * this origin (the favicon). No form-action directive: the consent answer redirects to the
 * client's own URI, which form-action would block.
 */
const pageHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  const h = c.res.headers;
  if (!h.has("cache-control")) {
    h.set("Cache-Control", "no-store");
  }
  // Dashboard pages set their own, which allows this origin's scripts (workers/api/web/dashboard.ts).
  if (!h.has("content-security-policy")) {
    h.set(
      "Content-Security-Policy",
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
  }
  h.set("X-Frame-Options", "DENY");
  h.set("X-Content-Type-Options", "nosniff");
  // same-origin, not no-referrer: under no-referrer browsers send `Origin: null` on our own form posts,
  // which the CSRF check refuses; other sites (the client's redirect URI) still get no referrer.
  h.set("Referrer-Policy", "same-origin");
});

/** Everything outside /api: sign-in, the OAuth authorization pages, settings. */
export function webApp() {
  const web = new Hono<AppEnv>();
  web.use("*", init, pageHeaders);
  for (const page of [
    metadata,
    signInGet,
    signInPost,
    signOutPost,
    authorizeGet,
    authorizePost,
    homeGet,
    apiKeysGet,
    apiKeysCreate,
    apiKeysRevoke,
    connectedAppsGet,
    connectedAppsRevoke,
    membersGet,
    membersInvite,
    membersInvitationResend,
    membersInvitationRevoke,
    membersMemberRole,
    membersMemberRemove,
    auditLogGet,
    ssoGet,
    ssoSave,
    ssoTest,
    ssoVerify,
    ssoRemove,
    ssoEnforcement,
    ssoCallback,
    dataRetentionGet,
    dataRetentionPost,
    membersRemoveGet,
    membersSessionsEnd,
    accountGet,
    accountName,
    accountPassword,
    accountDelete,
    accountSessionsEndOthers,
    accountSessionEnd,
    signUpGet,
    signUpPost,
    signUpVerifyGet,
    signUpVerifyPost,
    passwordResetGet,
    passwordResetPost,
    passwordResetConfirmGet,
    passwordResetConfirmPost,
    invitationAcceptGet,
    invitationAcceptPost,
    assetsGet,
    faviconGet,
    dashboardGet,
  ]) {
    page.register(web);
  }
  web.all("*", async (c) => {
    // The Web API never redirects: clients would resend credentials to the target.
    if (c.req.path === "/api" || c.req.path.startsWith("/api/")) {
      return problemResponse(new ApiError("NOT_FOUND", "No such endpoint."));
    }
    if (!(await currentUser(c))) {
      return signInRedirect(c);
    }
    return errorPage(c, 404, "Not found", "There is no page here.");
  });
  return web;
}
