import { describe, expect, it } from "vitest";
import committed from "../../workers/api/web/client/openapi.gen.json";
import { api } from "../support/http.js";

// The dashboard's API types are generated from this committed copy of the document
// (test/node/api-generated.test.ts checks that step), so it must be the document the Worker serves.
describe("OpenAPI document snapshot", () => {
  it("is the document the API serves (run `npm run generate:api` if this fails)", async () => {
    const res = await api("/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(await res.json()).toStrictEqual(committed);
  });
});
