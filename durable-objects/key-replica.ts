import { DurableObject } from "cloudflare:workers";

/**
 * What one API key resolved to in Postgres at `readAt` (Postgres's clock, Unix ms): the principal's
 * fields the ingest path needs, or null when the key was revoked (or its project deleted).
 */
export type ReplicaEntry = {
  readAt: number;
  principal: {
    keyId: string;
    projectId: string;
    projectName: string;
    tenantId: string;
    planId: string;
    scopes: string[];
  } | null;
};

/**
 * One instance per API key, named by the key's SHA-256: the edge's copy of what Postgres says about the
 * key (workers/shared/credentials/key-replica.ts). The API Worker writes it after every committed change
 * to the key, its project or its tenant's plan; the ingest Worker writes what it read from Postgres.
 * Of two writes the one read later in Postgres wins, so a read that raced a revocation can never
 * overwrite the revocation's own write, which was read after the commit. Stored in SQLite, so an
 * eviction or restart forgets nothing.
 */
export class KeyReplica extends DurableObject<Env> {
  private entry: ReplicaEntry | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec(
      "CREATE TABLE IF NOT EXISTS entry (id INTEGER PRIMARY KEY CHECK (id = 1), read_at INTEGER NOT NULL, principal TEXT)",
    );
    for (const row of sql.exec<{ read_at: number; principal: string | null }>(
      "SELECT read_at, principal FROM entry",
    )) {
      this.entry = {
        readAt: row.read_at,
        principal: row.principal === null ? null : JSON.parse(row.principal),
      };
    }
  }

  /** The key as last written, or null when nothing was ever written for it. */
  get(): ReplicaEntry | null {
    return this.entry;
  }

  /**
   * Keeps `entry` unless the stored one was read later. A revocation for a key this replica never held
   * is kept only when `tombstone` says so (the API's writes): the ingest Worker's lookups of unknown
   * keys must not leave one object behind per guessed key.
   */
  put(entry: ReplicaEntry, tombstone: boolean): boolean {
    if (this.entry ? this.entry.readAt > entry.readAt : entry.principal === null && !tombstone) {
      return false;
    }
    this.entry = entry;
    this.ctx.storage.sql.exec(
      "INSERT INTO entry (id, read_at, principal) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET read_at = excluded.read_at, principal = excluded.principal",
      entry.readAt,
      entry.principal === null ? null : JSON.stringify(entry.principal),
    );
    return true;
  }
}
