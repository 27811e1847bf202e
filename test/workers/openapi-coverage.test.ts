import { describe, expect, it } from "vitest";
import { newApp } from "../../workers/api/app.js";
import { DOCS_ASSETS, DOCS_CSP } from "../../workers/api/routes/docs/index.js";
import { api } from "../support/http.js";

type Operation = {
  responses: Record<string, unknown>;
  security?: unknown[];
  operationId?: string;
  tags?: string[];
};

/**
 * Routes served on purpose outside the document: the document itself, its reference page and that
 * page's scripts and stylesheet, the OAuth protocol endpoints (form bodies, RFC 6749 answers), which
 * /.well-known/oauth-authorization-server describes instead, and the operator's announcement endpoint
 * for the admin CLI (the operator secret, not a client credential; test/workers/security.test.ts).
 */
const UNDOCUMENTED = new Set([
  "GET /v1/openapi.json",
  "GET /docs",
  ...Object.values(DOCS_ASSETS).map((path) => `GET ${path}`),
  "POST /oauth/token",
  "POST /oauth/revoke",
  "POST /operator/credential-changes",
  "POST /operator/number-backfills",
  // Liveness (public, names nothing) and the operator's readiness view (docs/operations.md, "Health and
  // readiness"; test/workers/health.test.ts).
  "GET /health",
  "GET /operator/health",
]);

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

  it("gives every operation a unique operationId and tags declared at the document's top", async () => {
    const doc = (await (await api("/v1/openapi.json")).json()) as {
      tags: Array<{ name: string; description?: string }>;
      paths: Record<string, Record<string, Operation>>;
    };
    const declared = doc.tags.map((t) => t.name);
    expect(new Set(declared).size).toBe(declared.length);
    const ids: string[] = [];
    const used = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        expect(op.operationId, `${method} ${path}`).toMatch(/^[a-z][A-Za-z]+$/);
        ids.push(op.operationId ?? "");
        expect(op.tags?.length ?? 0, `${method} ${path}`).toBeGreaterThan(0);
        for (const tag of op.tags ?? []) {
          expect(declared, `${method} ${path}`).toContain(tag);
          used.add(tag);
        }
      }
    }
    expect(ids.length).toBeGreaterThan(30);
    expect(new Set(ids).size).toBe(ids.length);
    // No declared tag is left empty on the reference page.
    expect([...used].sort()).toEqual([...declared].sort());
  });
});

describe("GET /api/docs", () => {
  it("serves the interactive reference page, without credentials, reading the served document", async () => {
    const res = await api("/docs", { ip: "192.0.2.40" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const page = await res.text();
    expect(page).toContain("<title>Game Telemetry Analytics API</title>");
    expect(page).toContain('<div id="reference" data-document="/api/v1/openapi.json"></div>');
    // The URL the page reads is the document this Worker serves.
    const doc = await api("/v1/openapi.json", { ip: "192.0.2.40" });
    expect(doc.status).toBe(200);
    expect(((await doc.json()) as { openapi: string }).openapi).toBe("3.1.0");
  });

  it("runs only scripts of this origin: CSP script-src 'self', no inline script, each script served here", async () => {
    const res = await api("/docs", { ip: "192.0.2.41" });
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toBe(DOCS_CSP);
    const directives = new Map(
      csp.split(";").map((d) => {
        const [name = "", ...values] = d.trim().split(/\s+/);
        return [name, values];
      }),
    );
    expect(directives.get("script-src")).toEqual(["'self'"]);
    expect(directives.get("default-src")).toEqual(["'none'"]);
    expect(directives.get("connect-src")).toEqual(["'self'"]);
    const page = await res.text();
    const scripts = [...page.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(2);
    const sources = scripts.map(([, attrs = "", body]) => {
      expect(body, "no inline script").toBe("");
      return /\bsrc="([^"]+)"/.exec(attrs)?.[1] ?? "";
    });
    expect(sources).toEqual([`/api${DOCS_ASSETS.script}`, `/api${DOCS_ASSETS.init}`]);
    // Nothing else names another origin: no CDN stylesheet, font or image either.
    expect(page).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
    for (const src of sources) {
      const js = await api(src.slice("/api".length), { ip: "192.0.2.41" });
      expect(js.status, src).toBe(200);
      expect(js.headers.get("content-type"), src).toBe("text/javascript; charset=utf-8");
      expect(js.headers.get("cache-control"), src).toBe("public, max-age=31536000, immutable");
      expect(js.headers.get("x-content-type-options"), src).toBe("nosniff");
      expect((await js.text()).length, src).toBeGreaterThan(100);
    }
    const [, href] = /<link rel="stylesheet" href="([^"]+)"/.exec(page) ?? [];
    expect(href).toBe(`/api${DOCS_ASSETS.style}`);
    const css = await api(DOCS_ASSETS.style, { ip: "192.0.2.41" });
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await css.text()).toContain(".swagger-ui");
    // The initializer renders the document this page names, with Swagger UI's bundle loaded before it.
    const init = await (await api(DOCS_ASSETS.init, { ip: "192.0.2.41" })).text();
    expect(init).toContain("SwaggerUIBundle(");
    expect(init).toContain("root.dataset.document");
    // Another hash is no asset: an unknown path, refused without credentials like any other.
    expect((await api("/docs/swagger-ui-0000000000000000.js", { ip: "192.0.2.41" })).status).toBe(401);
  });
});
