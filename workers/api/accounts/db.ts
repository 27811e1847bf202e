// The domain runs under the Worker (Neon driver) and under the admin CLI and dev seed (node-postgres).
export type { AnyPg } from "../../shared/db.js";
