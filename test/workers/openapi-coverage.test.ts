import { describe, expect, it } from "vitest";
import { newApp } from "../../workers/api/app.js";
import { api } from "../support/http.js";

type Operation = { responses: Record<string, unknown>; security?: unknown[] };

/**
 * Routes served on purpose outside the document: the document itself, and the OAuth protocol endpoints
 * (form bodies, RFC 6749 answers), which /.well-known/oauth-authorization-server describes instead.
 */
const UNDOCUMENTED = new Set(["GET /v1/openapi.json", "POST /oauth/token", "POST /oauth/revoke"]);

describe("OpenAPI document", () => {
  it("describes every route the app serves, and nothing it does not serve", async () => {
    const doc = (await (await api("/v1/openapi.json")).json()) as {
      openapi: string;
      info: { version: string };
      paths: Record<string, Record<string, Operation>>;
    };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info.version).toBe("1.0");

    const served = new Set(
      newApp()
        .routes.filter((r) => r.method !== "ALL" && r.path.startsWith("/api/"))
        .map((r) => `${r.method} ${r.path.slice("/api".length).replace(/:(\w+)/g, "{$1}")}`)
        .filter((r) => !UNDOCUMENTED.has(r)),
    );
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) =>
        Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
      ),
    );
    // Ingest is its own Worker (workers/ingest/index.ts), without Hono, but part of the contract, so it is documented by hand.
    served.add("POST /v1/events");
    expect([...documented].sort()).toEqual([...served].sort());
    expect(served.size).toBeGreaterThan(30);
  });

  it("gives every operation a security requirement and the shared error responses", async () => {
    const doc = (await (await api("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, Operation>>;
    };
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.security?.length ?? 0, `${method} ${path}`).toBeGreaterThan(0);
        for (const status of ["401", "429"]) {
          expect(Object.keys(op.responses), `${method} ${path}`).toContain(status);
        }
      }
    }
  });
});
