import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { createKey, createProject, createTenant } from "../../workers/api/bootstrap.js";
import type { Db } from "../../workers/api/db.js";
import type { KeyPreset } from "../../workers/shared/credentials/scopes.js";

/**
 * An enterprise studio (no monthly event budget, 900,000 ingest requests an hour) with one project and a
 * key per preset, written straight to Postgres as the admin CLI does; `more` runs on the same connection.
 */
export async function seedProject<P extends KeyPreset, T = undefined>(
  databaseUrl: string,
  names: { studio: string; game: string },
  presets: readonly P[],
  more?: (db: Db) => Promise<T>,
): Promise<{ projectId: string; keys: Record<P, string>; more: T }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const db = drizzle({ client: pool });
    const tenant = await createTenant(db, names.studio, "enterprise");
    const project = await createProject(db, tenant.id, names.game);
    const keys = {} as Record<P, string>;
    for (const preset of presets) {
      keys[preset] = (await createKey(db, project.id, preset)).key;
    }
    return { projectId: project.id, keys, more: (await more?.(db)) as T };
  } finally {
    await pool.end();
  }
}
