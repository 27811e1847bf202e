import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, policy, problemDoc } from "../../openapi.js";
import { verifyAndAudit } from "../../sso/verify.js";
import { DomainParams, SsoDomainVerifiedSchema, studioOwner } from "./schema.js";

export const route = createRoute({
  method: "post",
  path: "/v1/studios/{tenantId}/sso/domains/{domain}/verify",
  operationId: "verifySsoDomain",
  tags: ["Single sign-on"],
  summary: "Check the DNS record that proves the studio owns a single sign-on domain",
  description:
    "Looks up the TXT record `_gt-sso.<domain>` through the DNS-over-HTTPS resolver the deployment names " +
    "(SSO_DNS_RESOLVER). Found with this studio's value: the domain is verified and, when the active " +
    "configuration names it, sign-ins from it go to the studio's provider. Not found: 200 with " +
    "`verified` as it was and `recordsFound`. Another studio's earlier proof gives way only when its " +
    "record is gone from DNS (409 while both are published). A resolver that fails is a retryable 503. " +
    "An owner's browser session only; audited.",
  ...policy({ scope: "data:admin" }),
  request: { params: DomainParams },
  responses: {
    200: envelope(SsoDomainVerifiedSchema, "The domain's record and whether it is verified."),
    ...errorResponses,
    409: problemDoc("Another studio proved this domain and its record is still published."),
    503: problemDoc("The DNS resolver could not answer; nothing changed. Retry later."),
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const params = c.req.valid("param");
    const { tenantId, userId } = await studioOwner(c, params.tenantId);
    const outcome = await verifyAndAudit(c, tenantId, userId, params.domain.trim().toLowerCase());
    return c.json(
      { success: true as const, data: { ...outcome.view, recordsFound: outcome.recordsFound } },
      200,
    );
  });
}
