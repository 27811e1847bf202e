// The admin CLI's commands (scripts/admin.ts runs them): what each writes, and which tenant's cached
// credentials it changes, to be announced to the Workers once committed (scripts/admin/announce.ts).
import { eq } from "drizzle-orm";
import { apiKeys, MEMBERSHIP_ROLES, type MembershipRole, projects } from "../../schema/pg/schema.js";
import { registerClient } from "../../workers/api/accounts/oauth/clients.js";
import { addMembership, createUser } from "../../workers/api/accounts/users.js";
import { auditOutside, keyLabel, OPERATOR_ACTOR } from "../../workers/api/audit/record.js";
import {
  createKey,
  createProject,
  createTenant,
  createToken,
  revokeKey,
} from "../../workers/api/bootstrap.js";
import type { Db } from "../../workers/api/db.js";
import type { CredentialChange } from "../../workers/shared/credentials/cache.js";
import { KEY_PRESETS, type KeyPreset } from "../../workers/shared/credentials/scopes.js";
import { isPlanId, PLAN_IDS } from "../../workers/shared/plans.js";
import { recordCommand } from "./audit.js";

export const USAGE = `usage:
  admin tenant create --name N --plan ${PLAN_IDS.join("|")}
  admin project create --tenant ID --name N
  admin key create --project ID --preset ${Object.keys(KEY_PRESETS).join("|")}
  admin key revoke --id ID
  admin token create --tenant ID --scopes analytics:read,resources:write [--ttl 3600]
  admin user create --tenant ID --email E --password P [--role owner|member]
  admin member add --tenant ID --email E [--role owner|member]
  admin client create --name N --redirect-uri URI [--redirect-uri URI ...] [--id ID]`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function need(values: Record<string, string | undefined>, name: string): string {
  const v = values[name];
  if (!v) {
    fail(`missing --${name}`);
  }
  return v;
}

function role(values: Record<string, unknown>): MembershipRole {
  const r = values.role ?? "owner";
  const known = MEMBERSHIP_ROLES.find((m) => m === r);
  if (!known) {
    fail(`--role must be one of ${MEMBERSHIP_ROLES.join(", ")}`);
  }
  return known;
}

/** A command's output, and the change to announce when it is one cached credentials may hold. */
export type Outcome = { result: unknown; change: CredentialChange | null };

/**
 * Runs one command. A revoked key and a new project change what the tenant's cached principals and
 * project lists say, and a new key must reach the key replica; new tenants, tokens, users and clients
 * are read from Postgres on first use and change nothing cached.
 */
export async function run(
  db: Db,
  words: string[],
  values: Record<string, string | undefined>,
  redirectUris: string[],
): Promise<Outcome> {
  // The change and its audit entry commit together.
  const result = await db.transaction(async (tx) => {
    const done = await execute(tx, words, values, redirectUris);
    await recordCommand(tx, words.join(" "), values, done);
    return done;
  });
  switch (words.join(" ")) {
    case "key revoke": {
      const [key] = await db
        .select({ projectId: apiKeys.projectId, tenantId: projects.tenantId })
        .from(apiKeys)
        .innerJoin(projects, eq(projects.id, apiKeys.projectId))
        .where(eq(apiKeys.id, need(values, "id")));
      if (key) {
        await auditOperator(db, "key.revoked", key.tenantId, key.projectId, need(values, "id"));
      }
      return { result, change: key ? { tenantId: key.tenantId, projectIds: [key.projectId] } : null };
    }
    case "key create": {
      // Nothing cached changes, but the announcement writes the new key to the ingest edge's replica,
      // so it works through a Postgres outage from its first request.
      const [project] = await db
        .select({ tenantId: projects.tenantId })
        .from(projects)
        .where(eq(projects.id, need(values, "project")));
      const projectId = need(values, "project");
      if (project && isCreated(result)) {
        await auditOperator(db, "key.created", project.tenantId, projectId, result.id);
      }
      return { result, change: project ? { tenantId: project.tenantId, projectIds: [projectId] } : null };
    }
    case "project create":
      return { result, change: { tenantId: need(values, "tenant") } };
    case "token create":
      await auditOutside(db, {
        tenantId: need(values, "tenant"),
        actor: OPERATOR_ACTOR,
        action: "token.created",
        target: { type: "token", id: null, label: "operator token" },
        detail: { scope: need(values, "scopes") },
        at: new Date(),
      });
      return { result, change: null };
    default:
      return { result, change: null };
  }
}

function isCreated(result: unknown): result is { id: string } {
  return typeof result === "object" && result !== null && typeof (result as { id?: unknown }).id === "string";
}

/** The operator's key changes in the audit log (docs/accounts.md, "Audit log"). */
async function auditOperator(
  db: Db,
  action: "key.created" | "key.revoked",
  tenantId: string,
  projectId: string,
  keyId: string,
): Promise<void> {
  await auditOutside(db, {
    tenantId,
    projectId,
    actor: OPERATOR_ACTOR,
    action,
    target: { type: "key", id: keyId, label: await keyLabel(db, keyId) },
    at: new Date(),
  });
}

async function execute(
  db: Db,
  words: string[],
  values: Record<string, string | undefined>,
  redirectUris: string[],
) {
  switch (words.join(" ")) {
    case "tenant create": {
      const plan = need(values, "plan");
      if (!isPlanId(plan)) {
        return fail(`--plan must be one of ${PLAN_IDS.join(", ")}`);
      }
      return createTenant(db, need(values, "name"), plan);
    }
    case "project create":
      return createProject(db, need(values, "tenant"), need(values, "name"));
    case "key create": {
      const preset = need(values, "preset");
      if (!(preset in KEY_PRESETS)) {
        fail(`--preset must be one of ${Object.keys(KEY_PRESETS).join(", ")}`);
      }
      return createKey(db, need(values, "project"), preset as KeyPreset, null, { type: "operator" });
    }
    case "key revoke":
      return revokeKey(db, need(values, "id"));
    case "token create":
      return createToken(
        db,
        need(values, "tenant"),
        need(values, "scopes")
          .split(",")
          .map((s) => s.trim()),
        Number(values.ttl ?? 3600),
      );
    case "user create":
      return createUser(db, {
        tenantId: need(values, "tenant"),
        email: need(values, "email"),
        password: need(values, "password"),
        role: role(values),
      });
    case "member add":
      return addMembership(db, {
        tenantId: need(values, "tenant"),
        email: need(values, "email"),
        role: role(values),
      });
    case "client create":
      return registerClient(db, { id: values.id, name: need(values, "name"), redirectUris });
    default:
      fail(`unknown command: ${words.join(" ") || "(none)"}`);
  }
}
