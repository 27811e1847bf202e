import type { Context, Hono } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../../../context.js";
import { connectionsOf } from "../../../sso/config.js";
import { proofsOf } from "../../../sso/domains.js";
import { breakGlassCandidates } from "../../../sso/enforcement.js";
import { callbackUrl } from "../../../sso/flow.js";
import { type PageEnv, userTenant, visitor } from "../../access.js";
import { errorPage } from "../../respond.js";
import { REFUSAL_WORDS, type SsoForm, ssoPage } from "./view.js";

/**
 * Owners only, after userTenant (and after csrfForm on a form post): a member of the studio gets 403
 * (other studios are 404 in userTenant). Every single sign-on page registers it in its own chain.
 */
export const ownersOnly = createMiddleware<PageEnv>(async (c, next) => {
  if (c.get("membership").role !== "owner") {
    return errorPage(c, 403, "Single sign-on", "Only an owner of the studio can set up single sign-on.");
  }
  await next();
});

/** The page, with an optional error (and the form as typed) or notice. */
export async function renderSso(
  c: Context<PageEnv>,
  extra: { error?: string; notice?: string; form?: SsoForm } = {},
  status: 200 | 400 | 404 | 409 | 503 = 200,
): Promise<Response> {
  const tenantId = c.get("membership").tenantId;
  const { active, pending } = await connectionsOf(c.get("db"), tenantId);
  const domains = [...new Set([...(active?.domains ?? []), ...(pending?.domains ?? [])])];
  const v = c.get("visitor");
  return c.html(
    ssoPage({
      nav: v.nav,
      csrf: v.csrf,
      membership: c.get("membership"),
      callbackUrl: callbackUrl(c),
      active,
      pending,
      proofs: await proofsOf(c.get("db"), tenantId, domains),
      owners: active ? await breakGlassCandidates(c.get("db"), active.tenantId) : [],
      ...extra,
    }),
    status,
  );
}

export function register(app: Hono<AppEnv>) {
  app.get("/settings/studios/:tenantId/sso", visitor, userTenant, ownersOnly, async (c) => {
    const test = c.req.query("test");
    const reason = c.req.query("reason") ?? "";
    const enforcement = c.req.query("enforcement");
    if (enforcement === "required" || enforcement === "not-required") {
      return renderSso(c, {
        notice:
          enforcement === "required"
            ? "Single sign-on is now required for this studio's members."
            : "Single sign-on is no longer required: members with a password may sign in with it.",
      });
    }
    if (test === "passed") {
      return renderSso(c, { notice: "Test sign-in succeeded: the configuration is saved and in use." });
    }
    if (test === "failed") {
      const words = REFUSAL_WORDS[reason] ?? "the sign-in did not complete";
      return renderSso(c, { error: `Test sign-in failed: ${words}. Nothing was saved.` });
    }
    return renderSso(c);
  });
}
