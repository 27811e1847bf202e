import { type Config, configOf } from "../shared/config.js";
import { CredentialCache, chargeCredential, credentialTtlMs } from "../shared/credentials/cache.js";
import { offerToReplica, readReplica } from "../shared/credentials/key-replica.js";
import { apiKeyOf, ingestKeyHash, lookupKey } from "../shared/credentials/keys.js";
import { noteUse } from "../shared/credentials/last-used.js";
import type { KeyPrincipal } from "../shared/credentials/principal.js";
import { sha256Hex } from "../shared/credentials/secrets.js";
import { concat, gunzipCapped, readCapped, sealEnvelope, TooLarge } from "../shared/envelope.js";
import { ApiError, problemResponse, toApiError } from "../shared/errors.js";
import { planOf, UNAUTHENTICATED_REQUESTS_PER_HOUR } from "../shared/plans.js";
import {
  buckets,
  charge,
  chargeIfCurrent,
  chargeMonthlyEvents,
  clientIp,
  rateLimitHeaders,
} from "../shared/rate-limit.js";
import { LIMITS } from "../shared/telemetry/limits.js";
import { Breaker } from "./breaker.js";
import { CORS_HEADERS, preflightResponse } from "./cors.js";
import { scanTelemetryBatch } from "./wire-scan.js";

export const MAX_BODY_BYTES = LIMITS.maxCompressedBytes;
const MAX_DECOMPRESSED_BYTES = LIMITS.maxDecompressedBytes;
const QUEUE_RETRY_AFTER_SECONDS = 5;

/**
 * POST /v1/events (the ingest host) and POST /api/v1/events (the app host). Conditions are checked in
 * the spec's order: required headers, API key, permissions, Content-Length, size, media type and
 * encoding, rate limit; then the body is read, decoded and validated, the monthly budget charged, and
 * the batch enqueued. 202 only once the queue has the message.
 */
export async function handleIngest(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  if (request.method === "OPTIONS") {
    return preflightResponse();
  }
  const headers = new Headers(CORS_HEADERS);
  try {
    const accepted = await ingest(request, env, ctx, headers);
    headers.set("content-type", "application/json");
    return new Response(JSON.stringify(accepted), { status: 202, headers });
  } catch (err) {
    const apiError = toApiError(err);
    if (apiError.status >= 500 && apiError.code !== "UNAVAILABLE") {
      console.error("ingest failed", err instanceof Error ? err.message : String(err));
    }
    return problemResponse(apiError, headers);
  }
}

async function ingest(request: Request, env: Env, ctx: ExecutionContext, out: Headers) {
  const { contentType, sdkVersion } = requiredHeaders(request);
  const { principal, transport } = await authenticate(request, env, ctx, out, contentType);
  const { contentLength, encoding } = transport;
  const plan = planOf(principal.planId);

  const body = await readBody(request, contentLength);
  const decoded = encoding === "gzip" ? await gunzip(body) : body;
  const eventCount = validate(decoded);

  const budget = await chargeMonthlyEvents(env, principal.tenantId, plan.eventsPerMonth, eventCount);
  if (!budget.allowed) {
    throw new ApiError(
      "RATE_LIMITED",
      `Monthly event budget of ${plan.eventsPerMonth} events is exhausted.`,
      {
        retryAfter: budget.retryAfter,
        extensions: { budget_used: budget.used },
      },
    );
  }
  const header = {
    v: 1 as const,
    projectId: principal.projectId,
    tenantId: principal.tenantId,
    batchKey: await batchKeyOf(principal.projectId, decoded),
    receivedAt: Date.now(),
    encoding,
    eventCount,
    sdkVersion,
  };
  try {
    await env.EVENTS_QUEUE.send(sealEnvelope(header, body), { contentType: "bytes" });
  } catch (err) {
    // Not accepted, so not charged: the SDK retries the same batch.
    ctx.waitUntil(chargeMonthlyEvents(env, principal.tenantId, null, -eventCount).catch(() => {}));
    console.error("queue send failed", err instanceof Error ? err.message : String(err));
    throw new ApiError("UNAVAILABLE", "The batch could not be queued; retry it.", {
      retryAfter: QUEUE_RETRY_AFTER_SECONDS,
    });
  }
  return { status: "accepted" as const };
}

/** The spec's first condition: what must be there before anything else is looked at. */
function requiredHeaders(request: Request): { contentType: string; sdkVersion: string } {
  if (request.method !== "POST") {
    throw new ApiError("METHOD_NOT_ALLOWED", "Only POST is accepted here.");
  }
  const contentType = request.headers.get("content-type");
  if (!contentType) {
    throw new ApiError("BAD_REQUEST", "Content-Type header is required (application/x-protobuf).", {
      extensions: { field: "Content-Type" },
    });
  }
  const sdkVersion = request.headers.get("x-sdk-version")?.trim();
  if (!sdkVersion || sdkVersion.length > 64) {
    throw new ApiError("BAD_REQUEST", "X-SDK-Version header is required, 1 to 64 characters.", {
      extensions: { field: "X-SDK-Version" },
    });
  }
  return { contentType, sdkVersion };
}

/** Content-Length (411, 413), then media type and encoding (415), in the spec's order. */
function transportHeaders(headers: Headers, contentType: string) {
  const declared = headers.get("content-length");
  if (declared === null) {
    throw new ApiError("LENGTH_REQUIRED", "Content-Length header is required.");
  }
  if (!/^\d{1,12}$/.test(declared)) {
    throw new ApiError("BAD_REQUEST", "Content-Length must be a whole number of bytes.", {
      extensions: { field: "Content-Length" },
    });
  }
  const contentLength = Number(declared);
  if (contentLength > MAX_BODY_BYTES) {
    throw new ApiError(
      "PAYLOAD_TOO_LARGE",
      `Body is ${contentLength} bytes; at most ${MAX_BODY_BYTES} are accepted.`,
    );
  }
  const mediaType = contentType.split(";")[0]?.trim().toLowerCase();
  if (mediaType !== "application/x-protobuf") {
    throw new ApiError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Content-Type ${mediaType} is not supported; send application/x-protobuf.`,
    );
  }
  const encoding = (headers.get("content-encoding") ?? "identity").trim().toLowerCase();
  if (encoding !== "gzip" && encoding !== "identity") {
    throw new ApiError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Content-Encoding ${encoding} is not supported; send gzip or none.`,
    );
  }
  return { contentLength, encoding: encoding as "gzip" | "identity" };
}

/** Every event, one streaming pass; the first fault rejects the whole batch. Returns the event count. */
function validate(protobuf: Uint8Array): number {
  const scan = scanTelemetryBatch(protobuf, Date.now() * 1000);
  if (!scan.ok) {
    const where = scan.eventIndex === null ? scan.field : `events[${scan.eventIndex}].${scan.field}`;
    throw new ApiError("BAD_REQUEST", `${where}: ${scan.rule}`, {
      extensions: { field: where, event_index: scan.eventIndex },
    });
  }
  return scan.eventCount;
}

// Ingest is the hot path: a key's principal is cached per isolate, by the key's hash, and confirmed
// current by the ingest bucket's RateLimiter call on every request (workers/shared/credentials/cache.ts).
// Postgres is not needed to stay available: an expired entry is served while Postgres is down, and a key
// this isolate never saw is read from the key replica (workers/shared/credentials/key-replica.ts).
const keyCache = new CredentialCache<KeyPrincipal>();

/**
 * How long a key lookup may wait for Postgres before the replica answers instead: above a healthy
 * lookup's worst case (a Neon compute waking from scale-to-zero takes a few hundred ms), far below an
 * SDK's request timeout.
 */
const KEY_LOOKUP_TIMEOUT_MS = 3_000;
/** After a failed lookup, how long this isolate answers from its cache and the replica without asking. */
const POSTGRES_BREAKER_OPEN_MS = 5_000;

/** One breaker per database this isolate talks to (tests point some requests at a closed port). */
const breakers = new Map<string, Breaker>();

function postgresBreaker(config: Config): Breaker {
  const name = `${config.DATABASE_URL} ${config.NEON_LOCAL_PROXY}`;
  let breaker = breakers.get(name);
  if (!breaker) {
    if (breakers.size >= 16) {
      breakers.clear();
    }
    breaker = new Breaker("Postgres", POSTGRES_BREAKER_OPEN_MS);
    breakers.set(name, breaker);
  }
  return breaker;
}

/**
 * The key's principal with the request charged to its project's ingest bucket (one RateLimiter call on
 * a warm cache). Before anything is charged the key must carry events:write (403) and the transport
 * headers must pass (411, 413, 415), in that order after authentication (401).
 */
async function authenticate(
  request: Request,
  env: Env,
  ctx: ExecutionContext,
  out: Headers,
  contentType: string,
): Promise<{ principal: KeyPrincipal; transport: ReturnType<typeof transportHeaders> }> {
  const secret = apiKeyOf(request.headers);
  const keyHash = secret === null ? null : await ingestKeyHash(secret);
  if (keyHash === null) {
    return refuse(request, env, out, secret !== null);
  }
  let transport: ReturnType<typeof transportHeaders> | undefined;
  const limitOf = (p: KeyPrincipal) => planOf(p.planId).ingestRequestsPerHour;
  const config = configOf(env);
  const charged = await chargeCredential({
    cache: keyCache,
    key: keyHash,
    bucketOf: (p) => buckets.ingest(p.projectId),
    limitOf,
    read: async () => {
      const found = await postgresBreaker(config).run(() =>
        lookupKey(config, keyHash, KEY_LOOKUP_TIMEOUT_MS),
      );
      // After the response: what Postgres said goes to the replica (filling it, or mending it).
      ctx.waitUntil(
        offerToReplica(env, keyHash, found.principal, found.readAt).catch((err) =>
          console.error("key replica not written", err instanceof Error ? err.message : String(err)),
        ),
      );
      return found.principal;
    },
    // Postgres down and nothing cached: the replica; a key it does not know is a 503, never a 401.
    fallback: () => readReplica(env, keyHash),
    // On a cache miss only: a busy key costs at most one lookup of its stored time per cache period.
    onRead: (p) => noteUse(env, ctx, p),
    admit: (p) => {
      authorize(p);
      transport = transportHeaders(request.headers, contentType);
    },
    charge: (bucket, expected, limit) => chargeIfCurrent(env, bucket, expected, limit),
    ttlMs: credentialTtlMs(configOf(env)),
  });
  if (!charged) {
    return refuse(request, env, out, true);
  }
  if (!transport) {
    throw new Error("admit() runs before every charge, so the transport headers were read");
  }
  applyHeaders(out, rateLimitHeaders(charged.rate));
  if (!charged.rate.allowed) {
    throw new ApiError("RATE_LIMITED", `Ingest rate of ${charged.limit} batches per hour exceeded.`, {
      retryAfter: charged.rate.retryAfter,
    });
  }
  return { principal: charged.principal, transport };
}

/** No valid key: charged to the client's address instead, then 401 (or 429 past that limit). */
async function refuse(request: Request, env: Env, out: Headers, keySent: boolean): Promise<never> {
  const rate = await charge(
    env,
    buckets.anonymous(clientIp(request.headers)),
    UNAUTHENTICATED_REQUESTS_PER_HOUR,
  );
  applyHeaders(out, rateLimitHeaders(rate));
  if (!rate.allowed) {
    throw new ApiError("RATE_LIMITED", "Too many unauthenticated requests.", {
      retryAfter: rate.retryAfter,
    });
  }
  throw new ApiError(
    "UNAUTHORIZED",
    keySent
      ? "The API key is invalid or revoked."
      : "Missing X-API-Key header (ingest accepts API keys only).",
  );
}

function authorize(principal: KeyPrincipal): KeyPrincipal {
  if (!principal.scopes.includes("events:write")) {
    throw new ApiError("FORBIDDEN", "This API key lacks the scope events:write.");
  }
  return principal;
}

/** Stops reading past the limit, so an oversized or lying body costs no more than that. */
async function readBody(request: Request, declared: number): Promise<Uint8Array> {
  let body: Uint8Array;
  try {
    body = await readCapped(request.body, MAX_BODY_BYTES);
  } catch (err) {
    if (err instanceof TooLarge) {
      throw new ApiError("PAYLOAD_TOO_LARGE", `Body exceeds ${MAX_BODY_BYTES} bytes.`);
    }
    throw err;
  }
  const total = body.byteLength;
  if (total !== declared) {
    throw new ApiError("BAD_REQUEST", `Content-Length says ${declared} bytes but the body has ${total}.`, {
      extensions: { field: "Content-Length" },
    });
  }
  if (total === 0) {
    throw new ApiError("BAD_REQUEST", "body: a TelemetryBatch is required.", {
      extensions: { field: "body" },
    });
  }
  return body;
}

async function gunzip(body: Uint8Array): Promise<Uint8Array> {
  try {
    return await gunzipCapped(body, MAX_DECOMPRESSED_BYTES);
  } catch (err) {
    if (err instanceof TooLarge) {
      throw new ApiError("PAYLOAD_TOO_LARGE", `Decompressed body exceeds ${MAX_DECOMPRESSED_BYTES} bytes.`);
    }
    throw new ApiError("BAD_REQUEST", "body: Content-Encoding is gzip but the body is not valid gzip.", {
      extensions: { field: "body" },
    });
  }
}

/**
 * Same project and same decoded batch, same key: a client's retry and a queue redelivery both dedupe
 * on it. It is taken over the decompressed protobuf, not the request body, because an SDK's retry of
 * the same events may be compressed at another level or sent raw (the UE5 SDK falls back to a body
 * without Content-Encoding).
 */
async function batchKeyOf(projectId: string, decoded: Uint8Array): Promise<string> {
  const prefix = new TextEncoder().encode(`${projectId}:`);
  return (await sha256Hex(concat([prefix, decoded], prefix.length + decoded.length))).slice(0, 32);
}

function applyHeaders(out: Headers, values: Record<string, string>): void {
  for (const [k, v] of Object.entries(values)) {
    out.set(k, v);
  }
}
