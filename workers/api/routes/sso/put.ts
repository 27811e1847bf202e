import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { userLabel } from "../../audit/record.js";
import { auditSsoChange } from "../../audit/sso.js";
import type { AppEnv } from "../../context.js";
import { bodyUpTo } from "../../middleware/body-limits.js";
import { envelope, errorResponses, policy, problemDoc } from "../../openapi.js";
import { connectionView, submitPending } from "../../sso/config.js";
import { proofsOf, proofView } from "../../sso/domains.js";
import { SSO_BODY_BYTES, SsoSubmitSchema, SsoSubmittedSchema, StudioParams, studioOwner } from "./schema.js";

export const route = createRoute({
  method: "put",
  path: "/v1/studios/{tenantId}/sso",
  operationId: "putSso",
  tags: ["Single sign-on"],
  summary: "Submit the studio's single sign-on configuration (saved after a test sign-in)",
  description:
    "Checks the fields, discovers the provider (its metadata must name the same issuer) and keeps the " +
    "configuration as pending; sign-in keeps using the active one. It is saved only when an owner runs " +
    "the test sign-in on the page at `testUrl` and it succeeds. A domain routes sign-ins only once the " +
    "studio proves it owns it: publish each `domainProofs[].record` in DNS and verify it (POST " +
    "…/sso/domains/{domain}/verify). A domain another studio proved belongs to it (409). " +
    "A provider that cannot be reached is a retryable 503.",
  ...policy({ scope: "data:admin" }, bodyUpTo(SSO_BODY_BYTES)),
  request: {
    params: StudioParams,
    body: { required: true, content: { "application/json": { schema: SsoSubmitSchema } } },
  },
  responses: {
    202: envelope(SsoSubmittedSchema, "Pending: run the test sign-in at testUrl to save it."),
    ...errorResponses,
    409: problemDoc("A domain already signs in with another studio's provider."),
    413: problemDoc(`The body exceeds ${SSO_BODY_BYTES} bytes.`),
    503: problemDoc("The provider could not be reached, or SSO_SECRET_KEY is not set; retry later."),
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { tenantId, userId } = await studioOwner(c, c.req.valid("param").tenantId);
    const body = c.req.valid("json");
    const db = c.get("db");
    const pending = await submitPending(db, c.get("config").SSO_SECRET_KEY, tenantId, userId, body);
    const actor = { type: "user" as const, id: userId, label: await userLabel(db, userId), userId };
    await auditSsoChange(c, actor, tenantId, "sso.submitted", pending, {
      secretChanged: Boolean(body.clientSecret),
    });
    const testUrl = `${new URL(c.req.url).origin}/settings/studios/${tenantId}/sso`;
    const proofs = await proofsOf(db, tenantId, pending.domains);
    return c.json(
      {
        success: true as const,
        data: { pending: connectionView(pending), domainProofs: proofs.map(proofView), testUrl },
      },
      202,
    );
  });
}
