// Every data read and change of the dashboard goes through the Web API the clients use, /api/v1, with
// the browser's session cookie (the API gate accepts it when no key is sent; docs/dashboard.md).
// The requests and answers are typed by the served OpenAPI document (api.gen.ts, `npm run generate:api`)
// through openapi-fetch: a call names its path once, as the document spells it, and the path
// parameters, query, body and answer follow from it, so the dashboard sends what the API accepts and
// reads the fields the API sends, nullability included, and none it does not:
//
//   const builds = await dataOf(api.GET("/v1/projects/{id}/builds", { params: { path: { id }, query: { days: "90" } } }));

import createClient, { type FetchResponse, type MaybeOptionalInit, type Middleware } from "openapi-fetch";
import type { components, operations, paths } from "./api.gen.js";

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

/** The query string: absent, null and empty values are left out (a control left blank asks for no filter). */
function querySerializer(query: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== "") {
      params.set(k, String(v));
    }
  }
  return params.toString();
}

/**
 * Every answer that is not a success becomes a thrown ApiProblem carrying the problem's `detail` (what
 * the API says is wrong, e.g. "query.days: Invalid option…") and `field`; a signed-out session sends the
 * person to sign in and come back here. A request that gets no answer at all is an ApiProblem with
 * status 0. So a call's awaited result is always the success answer.
 */
const problems: Middleware = {
  async onResponse({ response }) {
    if (response.ok) {
      return undefined;
    }
    let p: { detail?: unknown; title?: unknown; field?: unknown } = {};
    try {
      p = (JSON.parse(await response.text()) as typeof p | null) ?? {};
    } catch {
      p = {};
    }
    if (response.status === 401) {
      window.location.assign(`/sign-in?returnTo=${encodeURIComponent(location.pathname + location.search)}`);
    }
    const detail =
      typeof p.detail === "string"
        ? p.detail
        : typeof p.title === "string"
          ? p.title
          : `HTTP ${response.status}`;
    throw new ApiProblem(response.status, detail, typeof p.field === "string" ? p.field : undefined);
  },
  onError() {
    return new ApiProblem(0, "The service could not be reached. Check your connection and try again.");
  },
};

/**
 * The typed client of /api (the document's server; its paths start with /v1). Same-origin requests
 * carry the session cookie, and the browser adds the Origin and Sec-Fetch-Site headers the API gate
 * checks before a session may change data.
 */
const client = createClient<paths>({
  baseUrl: "/api",
  credentials: "same-origin",
  headers: { Accept: "application/json" },
  querySerializer,
});
client.use(problems);

type Method = "get" | "post" | "put" | "patch" | "delete";
type PathOf<M extends Method> = {
  [P in keyof paths]: paths[P][M] extends undefined ? never : P;
}[keyof paths];
type Init<P extends keyof paths, M extends Method> = MaybeOptionalInit<paths[P], M>;
/**
 * openapi-fetch's method with the request's type fixed by the path rather than inferred from the
 * argument, so a parameter the document does not declare (a misspelt query key beside right ones) is an
 * error, as in any object literal (openapi-fetch infers it, and then lets any extra key through).
 */
type Call<M extends Method> = <P extends PathOf<M>>(
  url: P,
  ...init: object extends NonNullable<Init<P, M>> ? [init?: Init<P, M>] : [init: Init<P, M>]
) => Promise<FetchResponse<NonNullable<paths[P][M]>, Init<P, M>, `${string}/${string}`>>;

// The same client: only its type is narrowed (TypeScript cannot compare the two generic signatures).
export const api = client as unknown as {
  GET: Call<"get">;
  POST: Call<"post">;
  PUT: Call<"put">;
  PATCH: Call<"patch">;
  DELETE: Call<"delete">;
};

/**
 * The `data` of a success envelope (`{ success: true, data }`), typed by the call's path and method:
 * `dataOf(api.GET("/v1/projects/{id}/builds", …))` is `Schemas["Build"][]`.
 */
export async function dataOf<D>(call: Promise<{ data?: { data: D } }>): Promise<D> {
  const { data } = await call;
  if (data === undefined) {
    throw new ApiProblem(0, "The service sent an empty answer. Try again.");
  }
  return data.data;
}
