import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";

// One error door: code -> status, category, title. Handlers throw ApiError; only problemResponse()
// formats bodies.
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
} as const satisfies Record<string, { status: ContentfulStatusCode; category: string; title: string }>;

export type ErrorCode = keyof typeof CODES;

export type ProblemExtras = {
  retryAfter?: number;
  /** Extension members, e.g. field and event_index for validation problems. */
  extensions?: Record<string, unknown>;
};

export class ApiError extends HTTPException {
  readonly code: ErrorCode;
  readonly extras: ProblemExtras;

  constructor(code: ErrorCode, detail: string, extras: ProblemExtras = {}) {
    super(CODES[code].status, { message: detail });
    this.code = code;
    this.extras = extras;
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

/** Any thrown value as an ApiError; unknown failures become a 500 that leaks nothing. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) {
    return err;
  }
  if (err instanceof HTTPException) {
    const code =
      (Object.keys(CODES) as ErrorCode[]).find((k) => CODES[k].status === err.status) ?? "INTERNAL";
    return new ApiError(code, err.message || CODES[code].title);
  }
  return new ApiError("INTERNAL", "An internal error occurred.");
}
