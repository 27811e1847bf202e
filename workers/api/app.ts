import { OpenAPIHono } from "@hono/zod-openapi";
import { Hono } from "hono";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { ApiError, codeOfStatus, problemResponse, toApiError } from "../shared/errors.js";
import type { AppEnv } from "./context.js";
import { SESSION_COOKIE } from "./credentials/session-cookie.js";
import { gate, limitAnonymous } from "./middleware/auth.js";
import { init } from "./middleware/init.js";
import { refuseUrlCredentials } from "./middleware/url-credentials.js";
import { defaultHook } from "./openapi.js";
import { alertsApp } from "./routes/alerts/index.js";
import { analyticsApp } from "./routes/analytics/index.js";
import { auditLogApp } from "./routes/audit-log/index.js";
import { channelsApp } from "./routes/channels/index.js";
import { contentApp } from "./routes/content/index.js";
import { dataRetentionApp } from "./routes/data-retention/index.js";
import { deadLettersApp } from "./routes/dead-letters/index.js";
import { DOCS_PATH, DOCUMENT_PATH, docsApp } from "./routes/docs/index.js";
import { erasuresApp } from "./routes/erasures/index.js";
import { registerIngestDoc } from "./routes/events/openapi.js";
import { exportsApp } from "./routes/exports/index.js";
import { healthApp } from "./routes/health/index.js";
import { mapsApp } from "./routes/maps/index.js";
import { oauthApp } from "./routes/oauth/index.js";
import { operatorApp } from "./routes/operator/index.js";
import { projectsApp } from "./routes/projects/index.js";
import { queryApp } from "./routes/query/index.js";
import { ssoApp } from "./routes/sso/index.js";
import { thresholdProfilesApp } from "./routes/threshold-profiles/index.js";
import { route as whoamiRoute } from "./routes/whoami/get.js";
import { whoami } from "./routes/whoami/index.js";
import { webApp } from "./web/app.js";

const publicLimit = createMiddleware<AppEnv>(async (c, next) => {
  await limitAnonymous(c);
  return next();
});

function onError(err: Error) {
  // Hono's own exceptions (e.g. a malformed body) carry a bare status: the same door, by that status.
  const apiError =
    err instanceof HTTPException
      ? new ApiError(codeOfStatus(err.status), err.message || "The request could not be processed.")
      : toApiError(err);
  if (apiError.status >= 500 && apiError.code !== "UNAVAILABLE") {
    // The message only: request headers (and so credentials) are never logged.
    console.error("unhandled error", err.message);
  }
  return problemResponse(apiError);
}

/** Every operation carries one of these tags: the reference page groups operations by them. */
const DOCUMENT_TAGS = [
  { name: "Keys", description: "Validate an API key." },
  { name: "Projects", description: "The tenant's projects and a project's status." },
  { name: "Analytics", description: "Reads computed in ClickHouse over a project's events." },
  { name: "Maps", description: "Map images and world bounds, used by heatmaps and alert rules." },
  { name: "Threshold profiles", description: "Performance budgets by device, used by alert rules." },
  { name: "Alerts", description: "Alert rules, their evaluation history and notification channels." },
  { name: "Content", description: "The content registry: display names for game content." },
  { name: "Query", description: "Read-only SQL over the project's events (data:admin)." },
  { name: "Data administration", description: "Exports and player erasure (data:admin)." },
  { name: "Dead letters", description: "Batches the consumer could not store, and their replay." },
  {
    name: "Audit log",
    description: "Who did what in the studio, from where, and how it ended (data:admin).",
  },
  {
    name: "Data retention",
    description: "How many days of raw events the studio keeps (reads stop at its horizon).",
  },
  {
    name: "Single sign-on",
    description: "The studio's OpenID Connect provider (an owner's browser session only).",
  },
  { name: "Ingest", description: "Telemetry batches from the engine SDKs (served by the ingest Worker)." },
];

/** The document's top-level fields; the operations and components come from the routes. */
const DOCUMENT = {
  openapi: "3.1.0",
  info: { title: "Game Telemetry Analytics API", version: "1.0" },
  servers: [{ url: "/api" }],
  tags: DOCUMENT_TAGS,
};

/**
 * The OpenAPI document the API serves at /api/v1/openapi.json, built outside a request so Node can
 * produce it too (`npm run generate:api`, for the dashboard's client types).
 */
export function openApiDocument() {
  return newApi().getOpenAPI31Document(DOCUMENT);
}

/** The Web API under /api; the one factory used by the Worker and the tests. */
export function newApp() {
  const app = new Hono<AppEnv>();
  app.route("/api", newApi());
  // Pages: sign-in, OAuth authorization, settings; any other path outside /api 307s to sign-in.
  app.route("/", webApp());
  app.onError(onError);
  return app;
}

function newApi() {
  const api = new OpenAPIHono<AppEnv>({ defaultHook });
  api.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
  });
  api.openAPIRegistry.registerComponent("securitySchemes", "BearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "OAuth 2.1 access token; carries only analytics:read and resources:write.",
  });
  api.openAPIRegistry.registerComponent("securitySchemes", "Session", {
    type: "apiKey",
    in: "cookie",
    name: SESSION_COOKIE,
    description:
      "The dashboard's sign-in session (browser only). Scopes of the member's role: owner analytics:read, " +
      "resources:write, data:admin; member the first two. Unsafe methods also need a same-origin Origin.",
  });
  registerIngestDoc(api);
  api.use("*", init);
  // A token or key in the query string is refused before anything reads it (RFC 6750 section 5.3).
  api.use("*", refuseUrlCredentials);

  // Public routes come first: they answer before the authentication gate below runs.
  api.use(DOCUMENT_PATH, publicLimit);
  api.doc31(DOCUMENT_PATH, DOCUMENT);
  api.use(DOCS_PATH, publicLimit);
  api.route(DOCS_PATH, docsApp);
  // Every route file declares its full path under /api (e.g. "/v1/projects/{id}/heatmap"), so each
  // resource is mounted at the root: `git grep` of a URL lands in the file that serves it.
  // OAuth token and revocation endpoints: public clients, no API credentials, their own rate bucket.
  api.route("/", oauthApp);
  // The admin CLI's change announcements and the readiness view: the operator secret, no API credentials.
  api.route("/", operatorApp);
  // Liveness: public by design, no credentials read, nothing checked (routes/health).
  api.route("/", healthApp);

  // Key validation is charged to its own bucket; everything else to the tenant's plan quota.
  api.use(whoamiRoute.path, gate("whoami"));
  api.use("*", gate("plan"));
  // In this order: it is the document's order, and the order of routes matching the same request.
  for (const resource of [
    whoami,
    projectsApp,
    deadLettersApp,
    thresholdProfilesApp,
    contentApp,
    mapsApp,
    channelsApp,
    alertsApp,
    erasuresApp,
    exportsApp,
    queryApp,
    analyticsApp,
    auditLogApp,
    ssoApp,
    dataRetentionApp,
  ]) {
    api.route("/", resource);
  }

  // Anything else under /api is a 404 problem, authenticated or not: never the redirect below, which
  // clients refuse because following it would resend their credentials.
  api.all("*", () => problemResponse(new ApiError("NOT_FOUND", "No such endpoint.")));
  api.onError(onError);
  return api;
}
