import type { Hono } from "hono";
import { openClickHouse } from "../../../shared/clickhouse.js";
import type { Config } from "../../../shared/config.js";
import { ApiError, DEPENDENCY_RETRY_AFTER_SECONDS, problemResponse } from "../../../shared/errors.js";
import { httpSql } from "../../../shared/pg.js";
import type { AppEnv } from "../../context.js";
import { requireOperator } from "./require.js";

// Readiness for the operator (docs/operations.md: "Health and readiness"): GET /api/operator/health with
// `Authorization: Bearer <OPERATOR_SECRET>` checks each dependency the API Worker serves from and says,
// per dependency, whether it answered and how fast. Not in the Web API document (an operator's route).
// The public liveness answer is /api/health (routes/health.ts), which checks nothing and says nothing.

export const OPERATOR_HEALTH_PATH = "/api/operator/health";

/** How long one check may take before it counts as down: well under an uptime monitor's timeout. */
const CHECK_TIMEOUT_MS = 3_000;
/** Parked dead letters counted per check; more shows as `truncated`. */
const DEAD_LETTER_COUNT_LIMIT = 1000;

type CheckStatus = "up" | "down";
type Check = { status: CheckStatus; latencyMs: number; error?: "timeout" | "unreachable" } & Record<
  string,
  unknown
>;

class Timeout extends Error {}

/** `probe` timed: up with its extra fields, or down with a word for why (never the error's text). */
async function timed(probe: () => Promise<Record<string, unknown>>): Promise<Check> {
  const started = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const extra = await Promise.race([
      probe(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Timeout()), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { status: "up", latencyMs: Date.now() - started, ...extra };
  } catch (err) {
    return {
      status: "down",
      latencyMs: Date.now() - started,
      error: err instanceof Timeout ? "timeout" : "unreachable",
    };
  } finally {
    clearTimeout(timer);
  }
}

async function postgres(config: Config) {
  const rows = await httpSql(config).query("SELECT 1 AS ok");
  if (rows[0]?.ok !== 1) {
    throw new Error("unexpected answer");
  }
  return {};
}

async function clickhouse(config: Config) {
  const rs = await openClickHouse(config, CHECK_TIMEOUT_MS).query({
    query: "SELECT 1 AS ok",
    format: "JSONEachRow",
  });
  const rows = await rs.json<{ ok: number }>();
  if (rows[0]?.ok !== 1) {
    throw new Error("unexpected answer");
  }
  return {};
}

/**
 * The queues as a Worker can see them. A producer binding exposes send() and nothing else: a queue's
 * backlog and its consumers' errors are in Cloudflare's dashboard (`wrangler queues info`), not here;
 * and a probe message would reach the consumers as work. So: each producer is bound, and the events
 * dead-letter queue's output, the batches parked in R2, is listed (count up to a limit).
 */
async function queues(env: Env) {
  const bindings = {
    "telemetry-events": env.EVENTS_QUEUE,
    "telemetry-notifications": env.NOTIFICATIONS_QUEUE,
    "telemetry-exports": env.EXPORTS_QUEUE,
  };
  const unbound = Object.entries(bindings)
    .filter(([, q]) => typeof q?.send !== "function")
    .map(([name]) => name);
  if (unbound.length > 0) {
    throw new Error(`unbound: ${unbound.join(", ")}`);
  }
  const listed = await env.DEAD_LETTERS.list({ prefix: "events/", limit: DEAD_LETTER_COUNT_LIMIT });
  return {
    producers: Object.keys(bindings),
    deadLetters: { parked: listed.objects.length, truncated: listed.truncated },
  };
}

/**
 * The readiness answer: 200 (`ready`, or `degraded` while dead letters are parked) when every dependency
 * answered, a retryable 503 problem naming the ones down (with the same checks under `health`) otherwise.
 */
export function register(app: Hono<AppEnv>) {
  app.get("/operator/health", async (c) => {
    await requireOperator(c);
    const config = c.get("config");
    const [pg, ch, q] = await Promise.all([
      timed(() => postgres(config)),
      timed(() => clickhouse(config)),
      timed(() => queues(c.env)),
    ]);
    const checks = { postgres: pg, clickhouse: ch, queues: q };
    const downNames = Object.entries(checks)
      .filter(([, check]) => check.status === "down")
      .map(([name]) => name);
    const parked = (q.deadLetters as { parked: number } | undefined)?.parked ?? 0;
    const status = downNames.length > 0 ? "down" : parked > 0 ? "degraded" : "ready";
    const health = { status, checkedAt: new Date(c.get("now")).toISOString(), checks };
    c.header("Cache-Control", "no-store");
    if (downNames.length > 0) {
      const notReady = new ApiError("UNAVAILABLE", `Not ready: ${downNames.join(", ")} down.`, {
        retryAfter: DEPENDENCY_RETRY_AFTER_SECONDS,
        extensions: { health },
      });
      return problemResponse(notReady, { "Cache-Control": "no-store" });
    }
    return c.json({ success: true as const, data: health }, 200);
  });
}
