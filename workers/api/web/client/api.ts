// Every data read and change of the dashboard goes through the Web API the clients use, /api/v1, with
// the browser's session cookie (the API gate accepts it when no key is sent; docs/dashboard.md).
// The answers' types come from the served OpenAPI document (api.gen.ts, `npm run generate:api`), so
// the dashboard reads the fields the API sends, nullability included, and none it does not.

import type { components, operations } from "./api.gen.js";

/** The document's named schemas, e.g. `Schemas["Build"]`. */
export type Schemas = components["schemas"];

/** An operation (by its operationId) as the document declares it. */
export type Operation = keyof operations;

type Success<R> = R extends { 200: infer S }
  ? S
  : R extends { 201: infer S }
    ? S
    : R extends { 202: infer S }
      ? S
      : never;

/** The `data` of an operation's success answer, e.g. `Answer<"listBuilds">` is `Schemas["Build"][]`. */
export type Answer<Op extends Operation> =
  Success<operations[Op]["responses"]> extends { content: { "application/json": { data: infer D } } }
    ? D
    : never;

/** A problem+json answer (RFC 9457) or a failed request, with the text to show a person. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly field?: string,
  ) {
    super(detail);
  }
}

type Query = Record<string, string | number | undefined | null>;

export function apiUrl(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== "") {
      params.set(k, String(v));
    }
  }
  const qs = params.toString();
  return `/api/v1${path}${qs ? `?${qs}` : ""}`;
}

/**
 * The `data` of a /api/v1 answer, typed by the operation `path` names (`api<"listBuilds">(…)`). Errors throw ApiProblem carrying the problem's `detail` (what the
 * API says is wrong, e.g. "query.days: Invalid option…"); a signed-out session sends the person to
 * sign in and come back here.
 */
export async function api<Op extends Operation>(
  path: string,
  opts: { query?: Query; method?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer<Op>> {
  const headers: Record<string, string> = { Accept: "application/json", ...opts.headers };
  let body: BodyInit | undefined;
  if (opts.body instanceof FormData) {
    body = opts.body;
  } else if (opts.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    res = await fetch(apiUrl(path, opts.query), {
      method: opts.method ?? "GET",
      headers,
      body,
      credentials: "same-origin",
    });
  } catch {
    throw new ApiProblem(0, "The service could not be reached. Check your connection and try again.");
  }
  const text = await res.text();
  let json: unknown = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!res.ok) {
    const p = (json ?? {}) as { detail?: unknown; title?: unknown; field?: unknown };
    if (res.status === 401) {
      window.location.assign(`/sign-in?returnTo=${encodeURIComponent(location.pathname + location.search)}`);
    }
    const detail =
      typeof p.detail === "string" ? p.detail : typeof p.title === "string" ? p.title : `HTTP ${res.status}`;
    throw new ApiProblem(res.status, detail, typeof p.field === "string" ? p.field : undefined);
  }
  return (json as { data: Answer<Op> }).data;
}
