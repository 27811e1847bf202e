import type { Hono } from "hono";
import { membershipOf } from "../../../accounts/team.js";
import { AccountError } from "../../../accounts/users.js";
import { audit, auditUser } from "../../../audit/record.js";
import { auditSsoChange, auditSsoRefusal } from "../../../audit/sso.js";
import type { AppEnv } from "../../../context.js";
import { currentUser } from "../../../credentials/session-cookie.js";
import {
  activatePending,
  checkCallback,
  type FlowOutcome,
  FlowRefused,
  provision,
} from "../../../sso/flow.js";
import { linkedTo } from "../../../sso/reauth.js";
import { errorPage } from "../../respond.js";
import { csrfToken, safeReturnTo } from "../../session.js";
import { signInAs } from "../../sign-in-as.js";
import { completeDeletion } from "../account/delete.js";
import { signInPage } from "../sign-in/view.js";
import { REFUSAL_WORDS, ssoPath } from "./view.js";

type Refused = Extract<FlowOutcome, { ok: false }>;

/**
 * The redirect URI every studio registers at its provider. A sign-in's answer signs the person in (the
 * user and their membership made on first sign-in); a test's answer saves the owner's pending
 * configuration. Every refusal is recorded with its reason.
 */
export function register(app: Hono<AppEnv>) {
  app.get("/sso/callback", async (c) => {
    const outcome = await checkCallback(c);
    const flow = outcome.flow;
    const now = new Date(c.get("now"));
    const db = c.get("db");
    const testFailed = async (refused: Refused) => {
      const owner = await currentUser(c);
      const actor = owner
        ? { type: "user" as const, id: owner.userId, label: owner.email, userId: owner.userId }
        : null;
      await auditSsoRefusal(c, refused, actor);
      return c.redirect(`${ssoPath(refused.flow?.tenantId ?? "")}?test=failed&reason=${refused.reason}`, 303);
    };
    const signInFailed = async (refused: Refused) => {
      await auditSsoRefusal(c, refused, null);
      const words = REFUSAL_WORDS[refused.reason] ?? "the sign-in did not complete";
      return c.html(
        signInPage({
          csrf: await csrfToken(c),
          returnTo: safeReturnTo(flow?.returnTo),
          email: flow?.email ?? "",
          error: `Single sign-on failed: ${words}. Try again, or ask the studio's owner.`,
        }),
        401,
      );
    };
    const deletionFailed = async (refused: Refused) => {
      await auditSsoRefusal(c, refused, null);
      const words = REFUSAL_WORDS[refused.reason] ?? "the sign-in did not complete";
      return errorPage(
        c,
        401,
        "Account not deleted",
        `Your account was not deleted: the confirmation with your identity provider failed (${words}). Nothing changed; try again from your account page.`,
      );
    };
    if (!outcome.ok) {
      if (flow?.purpose === "delete_account") {
        return deletionFailed(outcome);
      }
      return flow?.purpose === "test" ? testFailed(outcome) : signInFailed(outcome);
    }
    if (outcome.flow.purpose === "delete_account") {
      // The person who asked is still signed in here, and the provider signed in the account linked
      // to them: then the fresh sign-in stands in for the password they do not have.
      const user = await currentUser(c);
      if (!user || user.userId !== outcome.flow.userId) {
        return deletionFailed({ ok: false, reason: "browser_mismatch", flow, email: outcome.email });
      }
      if (!(await linkedTo(db, outcome.issuer, outcome.subject, user.userId))) {
        return deletionFailed({ ok: false, reason: "account_mismatch", flow, email: outcome.email });
      }
      try {
        return await completeDeletion(
          c,
          user,
          { reauthenticated: "sso" },
          {
            confirmedWith: "sso",
            issuer: outcome.issuer,
          },
        );
      } catch (err) {
        if (err instanceof AccountError) {
          return errorPage(c, 409, "Account not deleted", err.message);
        }
        throw err;
      }
    }
    if (outcome.flow.purpose === "test") {
      // The owner who started the test must still be signed in here and still an owner.
      const user = await currentUser(c);
      const membership = user ? await membershipOf(db, user.userId, outcome.flow.tenantId) : null;
      if (!user || user.userId !== outcome.flow.userId || membership?.role !== "owner") {
        return testFailed({
          ok: false,
          reason: "browser_mismatch",
          flow: outcome.flow,
          email: outcome.email,
        });
      }
      const actor = { type: "user" as const, id: user.userId, label: user.email, userId: user.userId };
      try {
        await db.transaction(async (tx) => {
          const { active, created } = await activatePending(tx, outcome.connection, outcome.email, now);
          await auditSsoChange(
            c,
            actor,
            active.tenantId,
            created ? "sso.configured" : "sso.changed",
            active,
            {
              testedAs: outcome.email,
            },
            tx,
          );
        });
      } catch (err) {
        if (err instanceof FlowRefused) {
          return testFailed({ ok: false, reason: err.reason, flow: outcome.flow, email: outcome.email });
        }
        throw err;
      }
      return c.redirect(`${ssoPath(outcome.flow.tenantId)}?test=passed`, 303);
    }
    let person: Awaited<ReturnType<typeof provision>>;
    try {
      person = await db.transaction(async (tx) => {
        const p = await provision(tx, outcome, now);
        if (p.joined) {
          await audit(
            c,
            {
              action: "member.provisioned",
              actor: { type: "user", id: p.userId, label: p.email, userId: p.userId },
              tenantId: outcome.connection.tenantId,
              projectId: null,
              target: { type: "user", id: p.userId, label: p.email },
              detail: { via: "sso", role: p.role, newAccount: p.createdUser, issuer: outcome.issuer },
            },
            tx,
          );
        }
        return p;
      });
    } catch (err) {
      if (err instanceof FlowRefused) {
        return signInFailed({ ok: false, reason: err.reason, flow: outcome.flow, email: outcome.email });
      }
      throw err;
    }
    await signInAs(c, person.userId, { ssoTenantId: outcome.connection.tenantId });
    await auditUser(c, person.userId, {
      action: "user.signed_in",
      actor: { type: "user", id: person.userId, label: person.email, userId: person.userId },
      target: { type: "user", id: person.userId, label: person.email },
      detail: { method: "sso", issuer: outcome.issuer, studio: outcome.connection.tenantId },
    });
    return c.redirect(safeReturnTo(outcome.flow.returnTo), 303);
  });
}
