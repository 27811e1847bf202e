// The Web API's answers as the served OpenAPI document declares them: the types openapi-typescript makes
// of it (workers/api/web/client/api.gen.ts, `npm run generate:api`), which the dashboard's typed client
// reads too. Tests read answers through these instead of shapes typed by hand, so a field the document
// renames, retypes or drops fails the typecheck of every test that reads it (and the snapshot tests keep
// the document and these types equal to what the Worker serves).
//
//   const created = ((await res.json()) as OkBody<"/v1/projects/{id}/erasures", "post">).data;
//   const profiles = await dataOf<Ok<"/v1/projects/{id}/threshold-profiles">>(res);

import type { components, paths } from "../../workers/api/web/client/api.gen.js";

/** The document's named schemas, e.g. `Schemas["Export"]`. */
export type Schemas = components["schemas"];

/** A path as the document spells it (`/v1/…`; tests send it under `/api`). */
export type ApiPath = keyof paths;

type Method = "get" | "post" | "put" | "patch" | "delete";

/** The methods the document declares on `P`. */
export type MethodOf<P extends ApiPath> = {
  [M in Method]: paths[P][M] extends undefined ? never : M;
}[Method];

type Responses<P extends ApiPath, M extends MethodOf<P>> =
  NonNullable<paths[P][M]> extends { responses: infer R } ? R : never;

type Success<R> = R extends { 200: infer S }
  ? S
  : R extends { 201: infer S }
    ? S
    : R extends { 202: infer S }
      ? S
      : never;

type JsonOf<S> = S extends { content: { "application/json": infer B } } ? B : never;

/** The JSON body of the success answer (200, 201 or 202) of `M` on `P`: `{ success: true; data }`. */
export type OkBody<P extends ApiPath, M extends MethodOf<P> = MethodOf<P> & "get"> = JsonOf<
  Success<Responses<P, M>>
>;

/** The `data` of that answer, e.g. `Ok<"/v1/projects">` is `Schemas["Project"][]`. */
export type Ok<P extends ApiPath, M extends MethodOf<P> = MethodOf<P> & "get"> =
  OkBody<P, M> extends { data: infer D } ? D : never;
