// One error door for both Workers: code -> status, category, title. Handlers throw ApiError; only
// problemResponse() formats bodies. Nothing here imports a framework: the ingest Worker's bundle carries
// no Hono, and the API Worker converts Hono's own exceptions at its edge (workers/api/app.ts).
const CODES = {
  BAD_REQUEST: { status: 400, category: "validation", title: "Bad Request" },
  UNAUTHORIZED: { status: 401, category: "authentication", title: "Unauthorized" },
  FORBIDDEN: { status: 403, category: "authorization", title: "Forbidden" },
  NOT_FOUND: { status: 404, category: "not_found", title: "Not Found" },
  METHOD_NOT_ALLOWED: { status: 405, category: "validation", title: "Method Not Allowed" },
  CONFLICT: { status: 409, category: "conflict", title: "Conflict" },
  LENGTH_REQUIRED: { status: 411, category: "payload", title: "Length Required" },
  PAYLOAD_TOO_LARGE: { status: 413, category: "payload", title: "Payload Too Large" },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, category: "payload", title: "Unsupported Media Type" },
  UNPROCESSABLE: { status: 422, category: "validation", title: "Unprocessable Content" },
  RATE_LIMITED: { status: 429, category: "rate_limit", title: "Too Many Requests" },
  INTERNAL: { status: 500, category: "internal", title: "Internal Server Error" },
  UNAVAILABLE: { status: 503, category: "internal", title: "Service Unavailable" },
} as const satisfies Record<string, { status: number; category: string; title: string }>;

export type ErrorCode = keyof typeof CODES;
export type ErrorStatus = (typeof CODES)[ErrorCode]["status"];

export type ProblemExtras = {
  retryAfter?: number;
  /** Extension members, e.g. field and event_index for validation problems. */
  extensions?: Record<string, unknown>;
};

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  readonly extras: ProblemExtras;

  constructor(code: ErrorCode, detail: string, extras: ProblemExtras = {}) {
    super(detail);
    this.name = "ApiError";
    this.code = code;
    this.status = CODES[code].status;
    this.extras = extras;
  }
}

/** Seconds a client is asked to wait before retrying when a dependency is down. */
export const DEPENDENCY_RETRY_AFTER_SECONDS = 5;

export type Dependency = "ClickHouse" | "Postgres" | "Queue" | "R2" | "Durable Objects";

/**
 * A dependency (ClickHouse, Postgres, a Queue) could not be reached or refused service. Thrown at the
 * client boundary (shared/clickhouse.ts, shared/pg.ts, the queue senders), so the door below can answer
 * a retryable 503 instead of a bare 500 without guessing from error messages.
 */
export class DependencyDown extends Error {
  readonly dependency: Dependency;

  constructor(dependency: Dependency, cause?: unknown) {
    super(`${dependency} is unavailable`, { cause });
    this.name = "DependencyDown";
    this.dependency = dependency;
  }
}

export function problemBody(code: ErrorCode, detail: string, extras: ProblemExtras = {}) {
  const def = CODES[code];
  const retryable = code === "RATE_LIMITED" || code === "UNAVAILABLE";
  return {
    type: "about:blank",
    title: def.title,
    status: def.status,
    detail,
    error_category: def.category,
    retryable,
    ...(extras.retryAfter !== undefined ? { retry_after: extras.retryAfter } : {}),
    ...extras.extensions,
    // The spec's older error form, so clients written for either form work unchanged.
    success: false as const,
    error: detail,
  };
}

export function problemResponse(err: ApiError, headers?: HeadersInit): Response {
  const h = new Headers(headers);
  h.set("content-type", "application/problem+json");
  if (err.extras.retryAfter !== undefined) {
    h.set("retry-after", String(err.extras.retryAfter));
  }
  return new Response(JSON.stringify(problemBody(err.code, err.message, err.extras)), {
    status: err.status,
    headers: h,
  });
}

/** The code whose status this is, for errors raised by frameworks with a bare HTTP status. */
export function codeOfStatus(status: number): ErrorCode {
  return (Object.keys(CODES) as ErrorCode[]).find((k) => CODES[k].status === status) ?? "INTERNAL";
}

/**
 * Any thrown value as an ApiError: a dependency that is down becomes a retryable 503 (anywhere in the
 * cause chain, since client libraries wrap errors); unknown failures a 500 that leaks nothing.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) {
    return err;
  }
  const down = dependencyDownIn(err);
  if (down) {
    return new ApiError("UNAVAILABLE", `${down.dependency} is temporarily unavailable; retry the request.`, {
      retryAfter: DEPENDENCY_RETRY_AFTER_SECONDS,
      extensions: { dependency: down.dependency },
    });
  }
  return new ApiError("INTERNAL", "An internal error occurred.");
}

/** The DependencyDown an error is or was caused by, if any. */
export function dependencyDownIn(err: unknown): DependencyDown | null {
  let at: unknown = err;
  for (let depth = 0; depth < 8 && at instanceof Error; depth++) {
    if (at instanceof DependencyDown) {
      return at;
    }
    at = at.cause;
  }
  return null;
}
