import { and, desc, eq, inArray, isNull } from "drizzle-orm";
import type { KeyCreatorType } from "../../../schema/pg/columns.js";
import { apiKeys, type MembershipRole, projects, users } from "../../../schema/pg/schema.js";
import { KEY_PRESETS, type KeyPreset } from "../../shared/credentials/scopes.js";
import { createKey, type KeyCreator } from "../bootstrap.js";
import type { Db, Tx } from "../db.js";

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

/** How a key's creator reads on the pages. */
export type CreatorLabel = { type: KeyCreatorType | null; name: string | null; email: string | null };

/** "unknown" for keys made before creators were recorded; a person by name and email. */
export function creatorText(c: CreatorLabel): string {
  switch (c.type) {
    case null:
      return "unknown";
    case "operator":
      return "operator (admin CLI)";
    case "api_key":
      return "an API key";
    case "oauth_client":
    case "user": {
      const who = c.email ? (c.name ? `${c.name} (${c.email})` : c.email) : "a deleted account";
      return c.type === "user" ? who : `${who}, through an app`;
    }
  }
}

/** The project's live keys, newest first, with their creator. Never the secret: only its prefix. */
export async function keysOfProject(db: Db, projectId: string) {
  const rows = await db
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      prefix: apiKeys.prefix,
      preset: apiKeys.preset,
      scopes: apiKeys.scopes,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
      creatorType: apiKeys.createdByType,
      creatorName: users.name,
      creatorEmail: users.email,
    })
    .from(apiKeys)
    .leftJoin(users, eq(users.id, apiKeys.createdByUserId))
    .where(and(eq(apiKeys.projectId, projectId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.createdAt), apiKeys.id);
  return rows.map(({ creatorType, creatorName, creatorEmail, ...key }) => ({
    ...key,
    creator: creatorText({ type: creatorType, name: creatorName, email: creatorEmail }),
  }));
}

export function createProjectKey(
  db: Db,
  projectId: string,
  preset: KeyPreset,
  name: string | null,
  creator: KeyCreator,
) {
  return createKey(db, projectId, preset, name, creator);
}

/** The live keys a person created in the studio's projects (offered for revocation when they are removed). */
export async function liveKeysCreatedBy(db: Db, tenantId: string, userId: string) {
  return db
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      prefix: apiKeys.prefix,
      preset: apiKeys.preset,
      projectId: projects.id,
      projectName: projects.name,
      createdAt: apiKeys.createdAt,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .where(
      and(eq(projects.tenantId, tenantId), eq(apiKeys.createdByUserId, userId), isNull(apiKeys.revokedAt)),
    )
    .orderBy(projects.name, desc(apiKeys.createdAt), apiKeys.id);
}

/** A key revoked with its creator's removal, as it was named. */
export type RevokedKey = { id: string; projectId: string; name: string | null; prefix: string };

/**
 * Revokes, inside the removal's transaction, the keys of `keyIds` that `userId` created in the studio's
 * projects and that are still live. An id that is not such a key (another studio's, someone else's) is
 * refused: the whole change rolls back (`KeysNotTheirs`). Returns the keys revoked and their projects.
 */
export async function revokeKeysCreatedBy(
  tx: Tx,
  tenantId: string,
  userId: string,
  keyIds: string[],
): Promise<{ projectIds: string[]; keys: RevokedKey[] }> {
  if (keyIds.length === 0) {
    return { projectIds: [], keys: [] };
  }
  const theirs = await tx
    .select({
      id: apiKeys.id,
      projectId: apiKeys.projectId,
      name: apiKeys.name,
      prefix: apiKeys.prefix,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .innerJoin(projects, eq(projects.id, apiKeys.projectId))
    .where(
      and(eq(projects.tenantId, tenantId), eq(apiKeys.createdByUserId, userId), inArray(apiKeys.id, keyIds)),
    )
    .for("update", { of: apiKeys });
  if (theirs.length !== new Set(keyIds).size) {
    throw new KeysNotTheirs();
  }
  const live = theirs.filter((k) => k.revokedAt === null);
  if (live.length) {
    await tx
      .update(apiKeys)
      .set({ revokedAt: new Date() })
      .where(
        and(
          inArray(
            apiKeys.id,
            live.map((k) => k.id),
          ),
          isNull(apiKeys.revokedAt),
        ),
      );
  }
  return {
    projectIds: [...new Set(live.map((k) => k.projectId))],
    keys: live.map(({ revokedAt: _, ...k }) => k),
  };
}

/** A ticked key that is not one the removed member created in this studio. */
export class KeysNotTheirs extends Error {
  constructor() {
    super("Keys: only keys this member created in this studio can be revoked with the removal.");
  }
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
