import { neonConfig, Pool } from "@neondatabase/serverless";
import type { Config } from "./config.js";
import { DependencyDown } from "./errors.js";

// The Postgres connection both Workers use, with no ORM: the ingest Worker runs plain SQL through it,
// the API Worker puts drizzle on top (shared/db.ts).

function configureNeon(config: Config): void {
  if (!config.NEON_LOCAL_PROXY) {
    return;
  }
  // Local stack: our loopback proxy plays the role of Neon's wsproxy in front of a plain Postgres.
  const proxy = config.NEON_LOCAL_PROXY;
  neonConfig.wsProxy = (host, port) => `${proxy}/?address=${host}:${port}`;
  neonConfig.useSecureWebSocket = false;
  neonConfig.pipelineTLS = false;
  neonConfig.pipelineConnect = false;
}

/**
 * SQLSTATE classes that mean the server is unreachable or refusing work, not that the statement was
 * wrong: connection exceptions (08), insufficient resources (53), operator intervention (57P0x).
 */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0)/;

/** True when a failed query says nothing about the statement: the server was not reachable or serving. */
function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) {
    return true;
  }
  const code = Reflect.get(err, "code");
  const severity = Reflect.get(err, "severity");
  // A server-side error carries a five-character SQLSTATE and a severity; anything else (a refused
  // socket, a closed WebSocket, a terminated connection) never reached a serving Postgres.
  if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && typeof severity === "string") {
    return UNAVAILABLE_SQLSTATE.test(code);
  }
  return true;
}

function guard(err: unknown): unknown {
  return isUnavailable(err) ? new DependencyDown("Postgres", err) : err;
}

/** `fn` with its promise rejections passed through guard(); other results unchanged. */
function guarded<F extends (...args: never[]) => unknown>(fn: F): F {
  const wrapped = (...args: Parameters<F>) => {
    const result = fn(...args);
    return result instanceof Promise ? result.catch((err: unknown) => Promise.reject(guard(err))) : result;
  };
  return wrapped as F;
}

/**
 * A Neon Pool whose connection failures surface as DependencyDown (a retryable 503 at the error door),
 * while statement errors (constraint violations and the like) pass through unchanged. Still a Pool, so
 * drizzle runs interactive transactions on it as before.
 */
export class GuardedPool extends Pool {
  constructor(config: ConstructorParameters<typeof Pool>[0]) {
    super(config);
    this.query = guarded(this.query.bind(this));
    this.connect = guarded(this.connect.bind(this));
  }
}

/** A pool per request (Workers may not share sockets across requests); end it when done. */
export function openPool(config: Config): GuardedPool {
  configureNeon(config);
  const pool = new GuardedPool({ connectionString: config.DATABASE_URL, max: 4 });
  // An idle client's socket error must not become an unhandled rejection that kills the request.
  pool.on("error", () => {});
  return pool;
}
