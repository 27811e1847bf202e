import { Scalar } from "@scalar/hono-api-reference";
import { Hono } from "hono";
import type { AppEnv } from "../../context.js";

/** Where the API Worker serves its OpenAPI document (relative to the /api mount) and the page reading it. */
export const DOCUMENT_PATH = "/v1/openapi.json";
export const DOCS_PATH = "/docs";

/**
 * The interactive reference at /api/docs: an HTML shell that loads Scalar's API reference in the
 * browser and points it at the document. Like the document it is public (it holds no data); the
 * reader's own key or token is what "Try it" sends, from the reader's browser.
 */
export const docsApp = new Hono<AppEnv>();
docsApp.use("*", async (c, next) => {
  await next();
  // The page runs scripts, so it gets no framing by other sites and no referrer beyond this origin.
  c.header("X-Frame-Options", "DENY");
  c.header("Content-Security-Policy", "frame-ancestors 'none'");
  c.header("Referrer-Policy", "same-origin");
});
docsApp.get(
  "/",
  Scalar({
    url: `/api${DOCUMENT_PATH}`,
    pageTitle: "Game Telemetry Analytics API",
    // The reader's credentials stay in their browser; nothing is remembered server-side.
    persistAuth: false,
  }),
);
