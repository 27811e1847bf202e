import { and, eq, isNull, lt } from "drizzle-orm";
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import * as oauth from "oauth4webapi";
import {
  memberships,
  type SsoConnectionRow,
  type SsoFlowPurpose,
  ssoConnections,
  ssoDomains,
  ssoFlows,
  ssoIdentities,
  users,
} from "../../../schema/pg/schema.js";
import { base64url, newSecret, sha256Hex } from "../../shared/credentials/secrets.js";
import type { AppEnv } from "../context.js";
import { cookieBase } from "../credentials/session-cookie.js";
import type { Tx } from "../db.js";
import { emailDomain } from "./config.js";
import { dropUnprovenClaims } from "./domains.js";
import {
  clientAuth,
  clientOf,
  discover,
  type ProviderRefusal,
  refusalOf,
  requestOptions,
} from "./provider.js";
import { REAUTH_MAX_AGE_SECONDS } from "./reauth.js";
import { openSecret } from "./secret.js";

// One authorization-code flow with the studio's provider (docs/accounts.md, "Single sign-on"): PKCE
// (S256), `state` and `nonce`. The flow's record (sso_flows) holds only hashes: SHA-256 of `state`,
// and SHA-256 of a random value kept in this browser's HttpOnly `gt_sso` cookie, from which (with the
// state) the PKCE verifier and the nonce are derived. So the callback works once (the record is spent
// by a conditional UPDATE), within 10 minutes, and only in the browser that started it; a code
// intercepted on its way back is useless without that cookie.

export const SSO_COOKIE = "gt_sso";
/** The redirect URI's path (registered as a literal in web/pages/sso/callback.ts). */
export const CALLBACK_PATH = "/sso/callback";
export const FLOW_TTL_MS = 10 * 60 * 1000;

const BINDING = /^ssob_[A-Za-z0-9_-]{40}$/;

/** The redirect URI to register at the provider: this origin's callback. */
export function callbackUrl<E extends AppEnv>(c: Context<E>): string {
  return `${new URL(c.req.url).origin}${CALLBACK_PATH}`;
}

async function derived(label: string, binding: string, state: string): Promise<string> {
  const digest = await crypto.subtle.digest(
    "SHA-256",
    new TextEncoder().encode(`${label}:${binding}:${state}`),
  );
  return base64url(new Uint8Array(digest));
}

/**
 * Starts a flow: records it, sets the browser's binding cookie (kept if it has a valid one, so flows in
 * two tabs both work) and returns the provider's authorization URL to redirect to.
 */
export async function startFlow<E extends AppEnv>(
  c: Context<E>,
  connection: SsoConnectionRow,
  purpose: SsoFlowPurpose,
  opts: { email?: string; returnTo?: string; userId?: string },
): Promise<string> {
  const as = await discover(connection.issuer);
  const existing = getCookie(c, SSO_COOKIE);
  const binding = existing && BINDING.test(existing) ? existing : newSecret("ssob_");
  const state = newSecret("ssos_");
  const now = new Date(c.get("now"));
  const db = c.get("db");
  // Spent and expired records are of no use after a day; cleared as flows start (indexed).
  await db.delete(ssoFlows).where(lt(ssoFlows.expiresAt, new Date(now.getTime() - 24 * 3600 * 1000)));
  await db.insert(ssoFlows).values({
    stateHash: await sha256Hex(state),
    bindingHash: await sha256Hex(binding),
    tenantId: connection.tenantId,
    connectionId: connection.id,
    purpose,
    email: opts.email ?? null,
    returnTo: opts.returnTo ?? "/",
    userId: opts.userId ?? null,
    createdAt: now,
    expiresAt: new Date(now.getTime() + FLOW_TTL_MS),
  });
  // Path=/ so that a flow started in another tab (from the sign-in page) reuses the value, not replaces it.
  setCookie(c, SSO_COOKIE, binding, { ...cookieBase(c), maxAge: FLOW_TTL_MS / 1000 });
  const url = new URL(as.authorization_endpoint ?? "");
  const params = {
    response_type: "code",
    client_id: connection.clientId,
    redirect_uri: callbackUrl(c),
    scope: "openid email profile",
    state,
    nonce: await derived("nonce", binding, state),
    code_challenge: await oauth.calculatePKCECodeChallenge(await derived("pkce", binding, state)),
    code_challenge_method: "S256",
    ...(opts.email ? { login_hint: opts.email } : {}),
    ...(purpose === "test" ? { prompt: "login" } : {}),
    // Confirming an account's deletion: the provider signs the person in again, now.
    ...(purpose === "delete_account" ? { prompt: "login", max_age: String(REAUTH_MAX_AGE_SECONDS) } : {}),
  };
  for (const [name, value] of Object.entries(params)) {
    url.searchParams.set(name, value);
  }
  return url.href;
}

/** Why a callback was refused (the audit log's `detail.reason`). */
export type FlowRefusal =
  | "state_missing"
  | "state_unknown"
  | "state_replayed"
  | "state_expired"
  | "browser_mismatch"
  | "email_missing"
  | "email_unverified"
  | "email_domain"
  | "account_elsewhere"
  | "domain_taken"
  | "configuration_replaced"
  | "account_mismatch"
  | ProviderRefusal;

export type FlowRecord = typeof ssoFlows.$inferSelect;

export type FlowOutcome =
  | { ok: false; reason: FlowRefusal; detail?: string; flow: FlowRecord | null; email?: string }
  | {
      ok: true;
      flow: FlowRecord;
      connection: SsoConnectionRow;
      issuer: string;
      subject: string;
      email: string;
    };

/**
 * Checks a callback: the flow's record (spent here, once), the browser's binding, then with the
 * provider the authorization response, the code exchange (PKCE verifier, client secret) and the ID
 * token (signature against the provider's keys, issuer, audience, expiry by the request's clock,
 * nonce), and last the email: verified and in one of the connection's domains.
 */
export async function checkCallback<E extends AppEnv>(c: Context<E>): Promise<FlowOutcome> {
  const url = new URL(c.req.url);
  const state = url.searchParams.get("state");
  if (!state) {
    return { ok: false, reason: "state_missing", flow: null };
  }
  const db = c.get("db");
  const now = new Date(c.get("now"));
  const stateHash = await sha256Hex(state);
  const [flow] = await db
    .update(ssoFlows)
    .set({ usedAt: now })
    .where(and(eq(ssoFlows.stateHash, stateHash), isNull(ssoFlows.usedAt)))
    .returning();
  if (!flow) {
    const [spent] = await db.select().from(ssoFlows).where(eq(ssoFlows.stateHash, stateHash)).limit(1);
    return { ok: false, reason: spent ? "state_replayed" : "state_unknown", flow: spent ?? null };
  }
  if (flow.expiresAt.getTime() <= now.getTime()) {
    return { ok: false, reason: "state_expired", flow };
  }
  const binding = getCookie(c, SSO_COOKIE) ?? "";
  if (!BINDING.test(binding) || (await sha256Hex(binding)) !== flow.bindingHash) {
    return { ok: false, reason: "browser_mismatch", flow };
  }
  const [connection] = flow.connectionId
    ? await db.select().from(ssoConnections).where(eq(ssoConnections.id, flow.connectionId)).limit(1)
    : [];
  if (!connection) {
    return { ok: false, reason: "configuration_replaced", flow };
  }
  let claims: oauth.IDToken;
  /** email_verified as the ID token says it, else as UserInfo does (Okta's thin ID token). */
  let emailVerified: unknown;
  let userinfoEmail: unknown;
  try {
    const as = await discover(connection.issuer);
    const client = clientOf(connection.clientId, c.get("now"));
    const params = oauth.validateAuthResponse(as, client, url, state);
    const secret = await openSecret(
      c.get("config").SSO_SECRET_KEY,
      connection.tenantId,
      connection.clientSecret,
    );
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      clientAuth(as, secret),
      params,
      callbackUrl(c),
      await derived("pkce", binding, state),
      requestOptions(connection.issuer),
    );
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: await derived("nonce", binding, state),
      requireIdToken: true,
      // A confirmation needs a fresh sign-in: the ID token's auth_time at most this old.
      ...(flow.purpose === "delete_account" ? { maxAge: REAUTH_MAX_AGE_SECONDS } : {}),
    });
    await oauth.validateApplicationLevelSignature(as, response, requestOptions(connection.issuer));
    const validated = oauth.getValidatedIdTokenClaims(result);
    if (!validated) {
      return { ok: false, reason: "invalid_response", detail: "no id_token", flow };
    }
    claims = validated;
    emailVerified = claims.email_verified;
    if (emailVerified === undefined && as.userinfo_endpoint) {
      const info = await oauth.processUserInfoResponse(
        as,
        client,
        claims.sub,
        await oauth.userInfoRequest(as, client, result.access_token, requestOptions(connection.issuer)),
      );
      emailVerified = info.email_verified;
      userinfoEmail = info.email;
    }
  } catch (err) {
    const refusal = await refusalOf(err);
    return { ok: false, reason: refusal.reason, detail: refusal.detail, flow };
  }
  const email = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  if (!email.includes("@")) {
    return { ok: false, reason: "email_missing", flow };
  }
  // Verified: email_verified true in the ID token, else at UserInfo for the same address (Okta), else
  // Entra ID's optional claim xms_edov (the email's domain owner verified it) in the ID token.
  const sameEmail =
    userinfoEmail === undefined ||
    (typeof userinfoEmail === "string" && userinfoEmail.trim().toLowerCase() === email);
  const verified =
    (emailVerified === true && sameEmail) || (emailVerified === undefined && claims.xms_edov === true);
  if (!verified) {
    return { ok: false, reason: "email_unverified", flow, email };
  }
  if (!connection.domains.includes(emailDomain(email))) {
    return { ok: false, reason: "email_domain", flow, email };
  }
  return { ok: true, flow, connection, issuer: claims.iss, subject: claims.sub, email };
}

/** A refusal raised inside the provisioning or activation transaction (rolls it back). */
export class FlowRefused extends Error {
  constructor(readonly reason: FlowRefusal) {
    super(reason);
  }
}

/**
 * The user a verified sign-in is: the one linked to the provider's account (issuer + subject), else the
 * account with this email when it is already a member of the studio (then linked), else a new user
 * without a password (then linked). A new member of the studio joins with the connection's default
 * role (just in time). An existing account that is not a member is refused: a studio's provider may
 * only vouch for the studio's own people, never take over someone else's account.
 */
export async function provision(
  tx: Tx,
  ok: Extract<FlowOutcome, { ok: true }>,
  now: Date,
): Promise<{ userId: string; email: string; createdUser: boolean; joined: boolean; role: string }> {
  const tenantId = ok.connection.tenantId;
  const [identity] = await tx
    .select()
    .from(ssoIdentities)
    .where(and(eq(ssoIdentities.issuer, ok.issuer), eq(ssoIdentities.subject, ok.subject)))
    .limit(1);
  let userId = identity?.userId;
  let createdUser = false;
  if (!userId) {
    // Two first sign-ins of the same person can run at once (a laptop and a phone): every insert below
    // gives way on its unique key (waiting for the other transaction, then reading what it committed)
    // instead of failing, so both end as the one user, link and membership.
    const [created] = await tx
      .insert(users)
      .values({ email: ok.email, passwordHash: "" })
      .onConflictDoNothing({ target: users.email })
      .returning({ id: users.id });
    if (created) {
      // No password: this person signs in through the provider (an empty hash never verifies).
      userId = created.id;
      createdUser = true;
    } else {
      const [existing] = await tx
        .select({ id: users.id })
        .from(users)
        .where(eq(users.email, ok.email))
        .limit(1);
      if (!existing) {
        throw new Error("sso: the user with this email was neither created nor found");
      }
      const [member] = await tx
        .select({ role: memberships.role })
        .from(memberships)
        .where(and(eq(memberships.userId, existing.id), eq(memberships.tenantId, tenantId)))
        .limit(1);
      if (!member) {
        throw new FlowRefused("account_elsewhere");
      }
      userId = existing.id;
    }
    await tx
      .insert(ssoIdentities)
      .values({
        issuer: ok.issuer,
        subject: ok.subject,
        userId,
        tenantId,
        email: ok.email,
        createdAt: now,
        lastSignInAt: now,
      })
      .onConflictDoNothing({ target: [ssoIdentities.issuer, ssoIdentities.subject] });
    const [linked] = await tx
      .select({ userId: ssoIdentities.userId })
      .from(ssoIdentities)
      .where(and(eq(ssoIdentities.issuer, ok.issuer), eq(ssoIdentities.subject, ok.subject)))
      .limit(1);
    if (linked && linked.userId !== userId) {
      // Linked meanwhile to another user (by a sign-in that found it under another email): that one.
      userId = linked.userId;
      createdUser = false;
    }
  } else {
    await tx
      .update(ssoIdentities)
      .set({ email: ok.email, lastSignInAt: now })
      .where(and(eq(ssoIdentities.issuer, ok.issuer), eq(ssoIdentities.subject, ok.subject)));
  }
  const joined = await tx
    .insert(memberships)
    .values({ userId, tenantId, role: ok.connection.defaultRole, createdAt: now })
    .onConflictDoNothing()
    .returning({ role: memberships.role });
  const [user] = await tx.select({ email: users.email }).from(users).where(eq(users.id, userId)).limit(1);
  return {
    userId,
    email: user?.email ?? ok.email,
    createdUser,
    joined: joined.length > 0,
    role: joined[0]?.role ?? "",
  };
}

/**
 * A successful test: the pending connection becomes the studio's active one (its fields copied onto the
 * active row, so enforcement settings stay), its domains claimed (one studio per domain: a domain
 * another studio claimed meanwhile refuses the whole change), the pending row removed. Returns the
 * active row and whether it is new.
 */
export async function activatePending(
  tx: Tx,
  pending: SsoConnectionRow,
  testedAs: string,
  now: Date,
): Promise<{ active: SsoConnectionRow; created: boolean; previous: SsoConnectionRow | null }> {
  const [locked] = await tx
    .select()
    .from(ssoConnections)
    .where(and(eq(ssoConnections.id, pending.id), eq(ssoConnections.state, "pending")))
    .for("update");
  if (!locked) {
    throw new FlowRefused("configuration_replaced");
  }
  const [previous] = await tx
    .select()
    .from(ssoConnections)
    .where(and(eq(ssoConnections.tenantId, locked.tenantId), eq(ssoConnections.state, "active")))
    .for("update");
  const fields = {
    issuer: locked.issuer,
    clientId: locked.clientId,
    clientSecret: locked.clientSecret,
    domains: locked.domains,
    defaultRole: locked.defaultRole,
    createdBy: locked.createdBy,
    testedAt: now,
    testedAs,
    updatedAt: now,
  };
  const [active] = previous
    ? await tx.update(ssoConnections).set(fields).where(eq(ssoConnections.id, previous.id)).returning()
    : await tx
        .insert(ssoConnections)
        .values({ tenantId: locked.tenantId, state: "active", ...fields, createdAt: now })
        .returning();
  if (!active) {
    throw new Error("sso: the active connection was not stored");
  }
  await tx.delete(ssoConnections).where(eq(ssoConnections.id, locked.id));
  await tx.delete(ssoDomains).where(eq(ssoDomains.tenantId, locked.tenantId));
  // A claim is not a route: only a domain this studio proved (domains.ts) sends sign-ins to it. A
  // claim by a studio that never proved the domain gives way.
  await dropUnprovenClaims(tx, locked.tenantId, locked.domains);
  const claimed = await tx
    .insert(ssoDomains)
    .values(locked.domains.map((domain) => ({ domain, tenantId: locked.tenantId, connectionId: active.id })))
    .onConflictDoNothing()
    .returning({ domain: ssoDomains.domain });
  if (claimed.length !== locked.domains.length) {
    throw new FlowRefused("domain_taken");
  }
  return { active, created: !previous, previous: previous ?? null };
}
