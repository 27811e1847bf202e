import { env } from "cloudflare:test";
import {
  type CreatedKey,
  createKey,
  createProject,
  createTenant,
  createToken,
} from "../../workers/api/bootstrap.js";
import { type Db, openDb } from "../../workers/api/db.js";
import { configOf } from "../../workers/shared/config.js";
import type { PlanId } from "../../workers/shared/plans.js";

export type Tenant = {
  tenantId: string;
  projectId: string;
  /** A second project of the same tenant: keys of the first must not reach it. */
  siblingProjectId: string;
  keys: { ingest: CreatedKey; read: CreatedKey; readwrite: CreatedKey; full: CreatedKey };
  token: string;
};

/** A fresh tenant with two projects, a key of every preset and a token: one per test file or test. */
export function seedTenant(plan: PlanId = "pro", name = "Test Studio"): Promise<Tenant> {
  return withDb(async (db) => {
    const { id: tenantId } = await createTenant(db, name, plan);
    const { id: projectId } = await createProject(db, tenantId, `${name} main`);
    const { id: siblingProjectId } = await createProject(db, tenantId, `${name} sibling`);
    const [ingest, read, readwrite, full] = await Promise.all(
      (["ingest", "read", "readwrite", "full"] as const).map((p) => createKey(db, projectId, p)),
    );
    const { token } = await createToken(db, tenantId, ["analytics:read", "resources:write"], 3600);
    return {
      tenantId,
      projectId,
      siblingProjectId,
      keys: { ingest: must(ingest), read: must(read), readwrite: must(readwrite), full: must(full) },
      token,
    };
  });
}

/** Runs `fn` with a database handle of the test's Worker environment. */
export async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  const { db, close } = openDb(configOf(env));
  try {
    return await fn(db);
  } finally {
    await close();
  }
}

function must<T>(v: T | undefined): T {
  if (v === undefined) {
    throw new Error("seed failed");
  }
  return v;
}

export const BASE = "http://127.0.0.1:8787";

/**
 * A fixture made by whichever test asks first and shared by the rest of the file's tests that only read
 * it: any one of them still runs alone (vitest -t), since it builds the fixture itself.
 */
export function once<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => {
    made ??= make();
    return made;
  };
}
