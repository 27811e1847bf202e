import { z } from "zod";

// Vars and secrets are validated once per isolate at the entry: a misconfigured deploy fails loudly on
// its first request instead of half-working.
const ConfigSchema = z.object({
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// URL"),
  CLICKHOUSE_URL: z.url(),
  CLICKHOUSE_USER: z.string().min(1),
  CLICKHOUSE_PASSWORD: z.string().default(""),
  // The user POST /v1/query runs as: SELECT on telemetry.events only, readonly. Empty: the main user,
  // with readonly enforced per query (the local engine has no users).
  CLICKHOUSE_QUERY_USER: z.string().default(""),
  CLICKHOUSE_QUERY_PASSWORD: z.string().default(""),
  SIGN_IN_URL: z.string().min(1),
  NEON_LOCAL_PROXY: z
    .string()
    .regex(/^(|[\w.-]+:\d+)$/, "must be host:port or empty")
    .default(""),
});

export type Config = z.infer<typeof ConfigSchema>;

let cached: { env: Env; config: Config } | undefined;

export function configOf(env: Env): Config {
  if (cached?.env === env) {
    return cached.config;
  }
  const parsed = ConfigSchema.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`invalid Worker configuration: ${issues}`);
  }
  cached = { env, config: parsed.data };
  return parsed.data;
}
