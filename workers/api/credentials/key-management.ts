import { and, desc, eq, isNull } from "drizzle-orm";
import { apiKeys, type MembershipRole } from "../../../schema/pg/schema.js";
import { KEY_PRESETS, type KeyPreset } from "../../shared/credentials/scopes.js";
import { createKey } from "../bootstrap.js";
import type { Db } from "../db.js";

/** The presets as the API Keys page offers them, with the spec's names. */
export const PRESET_LABELS: Record<KeyPreset, string> = {
  ingest: "Ingest",
  read: "Read-only",
  readwrite: "Read & Write",
  full: "Full",
};

export const KEY_NAME_MAX = 100;

export function isPreset(value: string): value is KeyPreset {
  return Object.hasOwn(KEY_PRESETS, value);
}

/**
 * Keys that can run raw SQL, export and erase (data:admin) are an owner's call; members manage the
 * others.
 */
export function mayManagePreset(role: MembershipRole, preset: string): boolean {
  return role === "owner" || preset !== "full";
}

/** The project's live keys, newest first. Never the secret: only the prefix it starts with. */
export async function keysOfProject(db: Db, projectId: string) {
  return db
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      prefix: apiKeys.prefix,
      preset: apiKeys.preset,
      scopes: apiKeys.scopes,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.projectId, projectId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt), apiKeys.id);
}

export function createProjectKey(db: Db, projectId: string, preset: KeyPreset, name: string | null) {
  return createKey(db, projectId, preset, name);
}

/** Revokes a live key of the project; false when there is none by that id. */
export async function revokeProjectKey(
  db: Db,
  projectId: string,
  keyId: string,
  role: MembershipRole,
): Promise<"revoked" | "not_found" | "forbidden"> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(keyId)) {
    return "not_found";
  }
  const [key] = await db
    .select({ id: apiKeys.id, preset: apiKeys.preset })
    .from(apiKeys)
    .where(and(eq(apiKeys.id, keyId), eq(apiKeys.projectId, projectId), isNull(apiKeys.revokedAt)))
    .limit(1);
  if (!key) {
    return "not_found";
  }
  if (!mayManagePreset(role, key.preset)) {
    return "forbidden";
  }
  await db
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, key.id), isNull(apiKeys.revokedAt)));
  return "revoked";
}
