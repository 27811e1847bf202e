import {
  type CustomTypesConfig,
  type NeonQueryFunction,
  neon,
  neonConfig,
  Pool,
} from "@neondatabase/serverless";
import type { Config } from "./config.js";
import { DependencyDown } from "./errors.js";

// How both Workers reach Postgres, with no ORM (the API Worker puts drizzle on top in workers/api/db.ts).
// Two transports, chosen by measurement (docs/architecture.md: "Reaching Postgres and ClickHouse"):
// - httpSql(): Neon's HTTP query path, one fetch per statement (or per non-interactive batch), with no
//   connection, startup or password exchange in the Worker. For one-shot statements: credential and
//   project lookups, the lastUsedAt update.
// - openPool(): a Pool over Neon's WebSocket, for interactive transactions; it connects on first use,
//   so a request that never queries through it pays nothing.

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
  // The same proxy serves Neon's SQL-over-HTTP endpoint (scripts/local/neon-proxy.ts).
  neonConfig.fetchEndpoint = `http://${proxy}/sql`;
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

type QueryConfig = { text: string; values?: unknown[]; rowMode?: string; types?: CustomTypesConfig };

function isQueryConfig(v: unknown): v is QueryConfig {
  return typeof v === "object" && v !== null && typeof Reflect.get(v, "text") === "string";
}

/**
 * Pool.query, sent over the HTTP query path: a statement outside a transaction needs no connection of
 * its own, so none is opened. Results keep the Pool's shape (rows, fields, rowCount, command), parsed
 * by the same type parsers the caller passed (drizzle passes its own for dates and intervals). The
 * callback forms, which nothing here uses, stay on the Pool.
 */
function queryOverHttp<F extends (...args: never[]) => unknown>(
  http: NeonQueryFunction<false, false>,
  pool: F,
): F {
  const query = (config: unknown, values?: unknown, callback?: unknown) => {
    if (typeof values === "function" || callback !== undefined) {
      return Reflect.apply(pool, undefined, [config, values, callback]);
    }
    const params = Array.isArray(values) ? values : undefined;
    if (typeof config === "string") {
      return http.query(config, params ?? [], { fullResults: true });
    }
    if (isQueryConfig(config)) {
      return http.query(config.text, params ?? config.values ?? [], {
        arrayMode: config.rowMode === "array",
        fullResults: true,
        types: config.types,
      });
    }
    return Reflect.apply(pool, undefined, [config, values]);
  };
  return query as unknown as F;
}

/**
 * A Neon Pool whose connection failures surface as DependencyDown (a retryable 503 at the error door),
 * while statement errors (constraint violations and the like) pass through unchanged. Still a Pool, so
 * drizzle runs interactive transactions on it as before (over a connection from connect()); given the
 * HTTP query function, its one-shot statements go over HTTP instead and open no connection.
 */
export class GuardedPool extends Pool {
  constructor(config: ConstructorParameters<typeof Pool>[0], http?: NeonQueryFunction<false, false>) {
    super(config);
    const query = guarded(this.query.bind(this));
    this.query = http ? queryOverHttp(http, query) : query;
    this.connect = guarded(this.connect.bind(this));
  }
}

const httpClients = new WeakMap<Config, NeonQueryFunction<false, false>>();

/**
 * Neon's HTTP query function for this config, with the same failure mapping as the Pool: statement
 * errors pass through, anything else is DependencyDown. Stateless (each query is one fetch), so one per
 * config object, shared by every request of the isolate.
 */
export function httpSql(config: Config): NeonQueryFunction<false, false> {
  let client = httpClients.get(config);
  if (!client) {
    configureNeon(config);
    const sql = neon(config.DATABASE_URL);
    // The driver's query results are thenables, not Promises: resolve them to catch their rejections.
    const query = (...args: Parameters<typeof sql.query>) =>
      Promise.resolve(sql.query(...args)).catch((err: unknown) => Promise.reject(guard(err)));
    const transaction = (...args: Parameters<typeof sql.transaction>) =>
      sql.transaction(...args).catch((err: unknown) => Promise.reject(guard(err)));
    client = new Proxy(sql, {
      get: (target, prop, receiver) =>
        prop === "query" ? query : prop === "transaction" ? transaction : Reflect.get(target, prop, receiver),
    });
    httpClients.set(config, client);
  }
  return client;
}

/** A pool per request (Workers may not share sockets across requests); end it when done. */
export function openPool(config: Config): GuardedPool {
  configureNeon(config);
  const pool = new GuardedPool({ connectionString: config.DATABASE_URL, max: 4 }, httpSql(config));
  // An idle client's socket error must not become an unhandled rejection that kills the request.
  pool.on("error", () => {});
  return pool;
}
