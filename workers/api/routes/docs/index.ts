import { Hono } from "hono";
import { html } from "hono/html";
import type { AppEnv } from "../../context.js";
import { DOCS_HASH, REFERENCE_JS, SWAGGER_UI_CSS, SWAGGER_UI_JS } from "./assets.gen.js";

/** Where the API Worker serves its OpenAPI document (relative to the /api mount) and the page reading it. */
export const DOCUMENT_PATH = "/v1/openapi.json";
export const DOCS_PATH = "/docs";

/**
 * The page's scripts and stylesheet, relative to the /api mount: Swagger UI (swagger-ui-dist) and our
 * initializer, built into the Worker (scripts/build-client.ts). Their URLs carry the hash of all three,
 * so they are cached for good and a new build gets new URLs.
 */
export const DOCS_ASSETS = {
  script: `${DOCS_PATH}/swagger-ui-${DOCS_HASH}.js`,
  style: `${DOCS_PATH}/swagger-ui-${DOCS_HASH}.css`,
  init: `${DOCS_PATH}/reference-${DOCS_HASH}.js`,
} as const;

/**
 * Scripts only from this origin (no CDN, no inline script); Swagger UI sets inline styles and draws its
 * icons from data: URLs; "Try it" and the document are fetched from this origin. Never framed.
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * The interactive reference at /api/docs: an HTML shell, Swagger UI and our initializer, all from this
 * Worker, pointed at the document. Like the document it is public (it holds no data); the reader's own
 * key or token is what "Try it" sends, from the reader's browser.
 */
export const docsApp = new Hono<AppEnv>();
docsApp.use("*", async (c, next) => {
  await next();
  c.header("X-Frame-Options", "DENY");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "same-origin");
});
docsApp.get("/", (c) => {
  c.header("Content-Security-Policy", DOCS_CSP);
  return c.html(html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Game Telemetry Analytics API</title>
    <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
    <link rel="stylesheet" href="/api${DOCS_ASSETS.style}" />
  </head>
  <body>
    <div id="reference" data-document="/api${DOCUMENT_PATH}"></div>
    <script src="/api${DOCS_ASSETS.script}"></script>
    <script src="/api${DOCS_ASSETS.init}"></script>
  </body>
</html>`);
});
const script = { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": IMMUTABLE };
docsApp.get(DOCS_ASSETS.script.slice(DOCS_PATH.length), (c) => c.body(SWAGGER_UI_JS, 200, script));
docsApp.get(DOCS_ASSETS.init.slice(DOCS_PATH.length), (c) => c.body(REFERENCE_JS, 200, script));
docsApp.get(DOCS_ASSETS.style.slice(DOCS_PATH.length), (c) =>
  c.body(SWAGGER_UI_CSS, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": IMMUTABLE }),
);
