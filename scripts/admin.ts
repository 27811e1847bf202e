// Bootstrap CLI: tenants, projects, keys, tokens, users, OAuth clients. JSON on stdout, one object per command.
// With no DATABASE_URL it uses the local stack's database, starting embedded Postgres if it is down.
import { parseArgs } from "node:util";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { MEMBERSHIP_ROLES, type MembershipRole } from "../schema/pg/schema.js";
import { registerClient } from "../workers/api/accounts/oauth/clients.js";
import { addMembership, createUser } from "../workers/api/accounts/users.js";
import {
  createKey,
  createProject,
  createTenant,
  createToken,
  revokeKey,
} from "../workers/shared/bootstrap.js";
import type { Db } from "../workers/shared/db.js";
import { isPlanId, PLAN_IDS } from "../workers/shared/plans.js";
import { KEY_PRESETS, type KeyPreset } from "../workers/shared/scopes.js";
import { localDatabase } from "./local/database.js";

const USAGE = `usage:
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

async function run(
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
      return createKey(db, need(values, "project"), preset as KeyPreset);
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

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: "string" },
      plan: { type: "string" },
      tenant: { type: "string" },
      project: { type: "string" },
      preset: { type: "string" },
      id: { type: "string" },
      scopes: { type: "string" },
      ttl: { type: "string" },
      email: { type: "string" },
      password: { type: "string" },
      role: { type: "string" },
      "redirect-uri": { type: "string", multiple: true },
    },
  });
  const database = await localDatabase();
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  try {
    const { "redirect-uri": redirectUris = [], ...single } = values;
    const result = await run(drizzle({ client: pool }), positionals, single, redirectUris);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (err) {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  } finally {
    await pool.end();
    await database.close();
  }
}

await main();
