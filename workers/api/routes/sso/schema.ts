import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { MEMBERSHIP_ROLES } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import { membershipOf } from "../../accounts/team.js";
import type { AppEnv } from "../../context.js";
import { principalOf } from "../../middleware/auth.js";
import { MAX_DOMAINS } from "../../sso/config.js";

export const SSO_BODY_BYTES = 16 * 1024;

export const StudioParams = z.object({
  tenantId: z
    .uuid()
    .openapi({ param: { name: "tenantId", in: "path" }, description: "Studio (tenant) UUID" }),
});

export const SsoConnectionSchema = z
  .object({
    id: z.uuid(),
    issuer: z.string().describe("The provider's issuer, as its discovery metadata names it"),
    clientId: z.string(),
    clientSecretSet: z.literal(true).describe("The secret is stored encrypted and never returned"),
    domains: z.array(z.string()).describe("Email domains that sign in with this provider"),
    defaultRole: z
      .enum(MEMBERSHIP_ROLES)
      .describe("The role of a person's membership made at their first sign-in"),
    requireSso: z.boolean().describe("Whether password sign-in is refused for the studio's members"),
    testedAt: z.iso.datetime().nullable().describe("The last successful test sign-in; null while pending"),
    testedAs: z.string().nullable().describe("The provider's email of that test sign-in"),
    updatedAt: z.iso.datetime(),
  })
  .openapi("SsoConnection");

export const SsoDomainProofSchema = z
  .object({
    domain: z.string(),
    record: z
      .object({
        type: z.literal("TXT"),
        name: z.string().describe("Where to publish it: `_gt-sso.<domain>`"),
        value: z
          .string()
          .describe("What to publish: `gt-sso-verification=<token>`, this studio's for the domain"),
      })
      .describe("The DNS record that proves the studio owns the domain"),
    verified: z
      .boolean()
      .describe("Whether the record was seen; only a verified domain routes sign-ins to the provider"),
    verifiedAt: z.iso.datetime().nullable(),
    checkedAt: z.iso.datetime().nullable().describe("The last lookup of the record"),
  })
  .openapi("SsoDomainProof");

export const DomainParams = StudioParams.extend({
  domain: z
    .string()
    .max(253)
    .openapi({
      param: { name: "domain", in: "path" },
      description: "One of the configuration's email domains",
    }),
});

export const SsoDomainVerifiedSchema = SsoDomainProofSchema.extend({
  recordsFound: z
    .number()
    .int()
    .describe("TXT records found at the record's name (none of them this studio's when not verified)"),
}).openapi("SsoDomainVerification");

export const SsoSettingsSchema = z
  .object({
    callbackUrl: z.string().describe("The redirect URI to register at the provider"),
    domainProofs: z
      .array(SsoDomainProofSchema)
      .describe(
        "The DNS record of each domain the active or pending configuration names, and whether it is verified",
      ),
    active: SsoConnectionSchema.nullable().describe("What sign-in uses; null when SSO is not set up"),
    pending: SsoConnectionSchema.nullable().describe("Submitted, waiting for a successful test sign-in"),
  })
  .openapi("SsoSettings");

export const SsoSubmitSchema = z
  .object({
    issuer: z
      .string()
      .max(500)
      .describe("Issuer URL; metadata is read from <issuer>/.well-known/openid-configuration"),
    clientId: z.string().min(1).max(255),
    clientSecret: z
      .string()
      .max(1024)
      .optional()
      .describe("Write-only. Omitted or empty: keep the stored secret"),
    domains: z.array(z.string().max(253)).min(1).max(MAX_DOMAINS),
    defaultRole: z.enum(MEMBERSHIP_ROLES).default("member"),
  })
  .openapi("SsoSubmit");

export const SsoSubmittedSchema = z
  .object({
    pending: SsoConnectionSchema,
    domainProofs: z
      .array(SsoDomainProofSchema)
      .describe("The DNS record to publish for each domain; a domain routes sign-ins once verified"),
    testUrl: z
      .string()
      .describe("The studio's Single sign-on page, where an owner runs the test sign-in that saves it"),
  })
  .openapi("SsoSubmitted");

export const SsoRemovedSchema = z.object({ removed: z.boolean() }).openapi("SsoRemoved");

/**
 * The studio's owner making this request. Single sign-on decides who can sign in to the whole studio,
 * so only an owner's own browser session may change or read it: an API key (a project's) or an OAuth
 * token is refused (403) even with data:admin; a member is refused (403), another studio is 404.
 */
export async function studioOwner(c: Context<AppEnv>, tenantId: string) {
  const p = principalOf(c);
  if (p.kind !== "session") {
    throw new ApiError(
      "FORBIDDEN",
      "Single sign-on is configured by an owner of the studio in a browser session, not with an API key or token.",
    );
  }
  const membership = await membershipOf(c.get("db"), p.userId, tenantId);
  if (!membership) {
    throw new ApiError("NOT_FOUND", "Studio not found.");
  }
  if (membership.role !== "owner") {
    throw new ApiError("FORBIDDEN", "Only an owner of the studio can configure single sign-on.");
  }
  return { userId: p.userId, tenantId };
}
