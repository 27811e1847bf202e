import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { auditEnforcementChange } from "../../audit/sso-enforcement.js";
import type { AppEnv } from "../../context.js";
import { principalOf } from "../../middleware/auth.js";
import { bodyUpTo } from "../../middleware/body-limits.js";
import { envelope, errorResponses, policy, problemDoc } from "../../openapi.js";
import { setEnforcement } from "../../sso/enforcement.js";
import { StudioParams, studioOwner } from "./schema.js";

const ENFORCEMENT_BODY_BYTES = 1024;

export const SsoEnforcementInputSchema = z
  .object({
    requireSso: z
      .boolean()
      .describe("Refuse password sign-in, password reset and invitations outside the domains"),
    breakGlassUserId: z
      .uuid()
      .nullable()
      .describe("The owner (with a password) who keeps password sign-in; required when requireSso is true"),
  })
  .openapi("SsoEnforcementInput");

export const SsoEnforcementSchema = z
  .object({
    requireSso: z.boolean(),
    breakGlassUserId: z.uuid().nullable(),
    sessionsEnded: z
      .number()
      .int()
      .describe("Members' sessions not signed in by this studio's provider, ended by turning it on"),
    invitationsRevoked: z
      .number()
      .int()
      .describe("Pending invitations outside the studio's domains, revoked by turning it on"),
  })
  .openapi("SsoEnforcement");

export const route = createRoute({
  method: "put",
  path: "/v1/studios/{tenantId}/sso/enforcement",
  operationId: "putSsoEnforcement",
  tags: ["Single sign-on"],
  summary: "Require single sign-on for the studio's members, or stop requiring it",
  description:
    "Needs an active (tested) configuration (409 otherwise). Requiring it refuses members' password " +
    "sign-in, password reset and invitations to addresses outside the studio's domains, except for the " +
    "break-glass owner named; turning it on also ends members' sessions that did not come from this " +
    "studio's provider (not the one making the request) and revokes pending invitations outside the " +
    "domains. Turning it off restores password sign-in for everyone with a password. An owner's browser " +
    "session only, as for the configuration.",
  ...policy({ scope: "data:admin" }, bodyUpTo(ENFORCEMENT_BODY_BYTES)),
  request: {
    params: StudioParams,
    body: { required: true, content: { "application/json": { schema: SsoEnforcementInputSchema } } },
  },
  responses: {
    200: envelope(SsoEnforcementSchema, "The enforcement as stored, and what turning it on ended."),
    ...errorResponses,
    409: problemDoc("Single sign-on is not set up (no tested configuration)."),
    413: problemDoc(`The body exceeds ${ENFORCEMENT_BODY_BYTES} bytes.`),
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { tenantId } = await studioOwner(c, c.req.valid("param").tenantId);
    const body = c.req.valid("json");
    const principal = principalOf(c);
    const keep = principal.kind === "session" ? principal.sessionId : null;
    const change = await c.get("db").transaction(async (tx) => {
      const made = await setEnforcement(tx, tenantId, body, keep, new Date(c.get("now")));
      await auditEnforcementChange(c, tenantId, made, tx);
      return made;
    });
    return c.json(
      {
        success: true as const,
        data: {
          requireSso: change.after.requireSso,
          breakGlassUserId: change.after.breakGlassUserId,
          sessionsEnded: change.sessionsEnded,
          invitationsRevoked: change.invitationsRevoked,
        },
      },
      200,
    );
  });
}
