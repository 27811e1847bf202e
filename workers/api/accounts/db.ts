import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";

// The domain runs under the Worker (Neon driver) and under the admin CLI and dev seed (node-postgres).
// biome-ignore lint/suspicious/noExplicitAny: any drizzle Postgres driver will do
export type AnyPg = PgDatabase<PgQueryResultHKT, any>;
