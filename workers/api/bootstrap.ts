import { eq } from "drizzle-orm";
import type { KeyCreatorType } from "../../schema/pg/columns.js";
import { apiKeys, oauthTokens, projects, tenants } from "../../schema/pg/schema.js";
import {
  isTokenScope,
  KEY_PRESETS,
  type KeyPreset,
  type Scope,
  TOKEN_SCOPES,
} from "../shared/credentials/scopes.js";
import { KEY_PREFIX, newSecret, sha256Hex, TOKEN_PREFIX } from "../shared/credentials/secrets.js";
import type { PlanId } from "../shared/plans.js";
import type { Db } from "./db.js";

// Record creation shared by the admin CLI (node-postgres) and the test harness (Neon driver in workerd).

export async function createTenant(db: Db, name: string, planId: PlanId): Promise<{ id: string }> {
  const [row] = await db.insert(tenants).values({ name, planId }).returning({ id: tenants.id });
  return { id: must(row).id };
}

export async function createProject(db: Db, tenantId: string, name: string): Promise<{ id: string }> {
  const [row] = await db.insert(projects).values({ tenantId, name }).returning({ id: projects.id });
  return { id: must(row).id };
}

export type CreatedKey = { id: string; key: string; projectId: string; scopes: Scope[] };

/** Who creates a key (api_keys.created_by_*): the person (userId) and, for a key or client, its id. */
export type KeyCreator = { type: KeyCreatorType; userId?: string | null; id?: string | null };

/** The secret is returned here once and never stored: only its hash is. */
export async function createKey(
  db: Db,
  projectId: string,
  preset: KeyPreset,
  name: string | null = null,
  creator: KeyCreator | null = null,
): Promise<CreatedKey> {
  if (!Object.hasOwn(KEY_PRESETS, preset)) {
    throw new Error(`unknown preset ${preset}`);
  }
  const scopes: Scope[] = [...KEY_PRESETS[preset]];
  const key = newSecret(KEY_PREFIX);
  const [row] = await db
    .insert(apiKeys)
    .values({
      projectId,
      keyHash: await sha256Hex(key),
      prefix: key.slice(0, 10),
      preset,
      scopes,
      name,
      createdByType: creator?.type ?? null,
      createdByUserId: creator?.userId ?? null,
      createdById: creator?.id ?? null,
    })
    .returning({ id: apiKeys.id });
  return { id: must(row).id, key, projectId, scopes };
}

export async function revokeKey(db: Db, id: string): Promise<{ id: string; revokedAt: string }> {
  const [row] = await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(eq(apiKeys.id, id))
    .returning({ id: apiKeys.id, revokedAt: apiKeys.revokedAt });
  if (!row?.revokedAt) {
    throw new Error(`no key ${id}`);
  }
  return { id: row.id, revokedAt: row.revokedAt.toISOString() };
}

export type CreatedToken = { token: string; tenantId: string; scopes: Scope[]; expiresAt: string };

export async function createToken(
  db: Db,
  tenantId: string,
  scopes: string[],
  ttlSeconds: number,
): Promise<CreatedToken> {
  const granted = scopes.filter(isTokenScope);
  const refused = scopes.filter((s) => !isTokenScope(s));
  if (refused.length || !granted.length) {
    throw new Error(
      `OAuth tokens can carry only ${TOKEN_SCOPES.join(", ")}; refused: ${refused.join(", ") || "(none given)"}`,
    );
  }
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) {
    throw new Error("ttl must be a positive whole number of seconds");
  }
  const token = newSecret(TOKEN_PREFIX);
  const expiresAt = new Date(Date.now() + ttlSeconds * 1000);
  await db
    .insert(oauthTokens)
    .values({ tenantId, tokenHash: await sha256Hex(token), scopes: granted, expiresAt });
  return { token, tenantId, scopes: granted, expiresAt: expiresAt.toISOString() };
}

function must<T>(row: T | undefined): T {
  if (!row) {
    throw new Error("insert returned no row");
  }
  return row;
}
