// The house rules for imports, checked by `npm run lint` (dependency-cruiser).
//
//   workers/api/      the API Worker: Web API, pages, alerting, exports, erasure, notifications
//   workers/ingest/   the ingest Worker: POST /v1/events and the events queue's consumer
//   workers/shared/   code BOTH Workers use (every file is reachable from both entry points, type
//                     imports included); it imports neither Worker, and no framework (Hono, zod) or ORM
//   durable-objects/  the Durable Objects, all hosted by the API Worker (wrangler.toml)
//   schema/, proto/   below everything, like workers/shared/
//
// A Worker's folder never imports the other Worker's folder, and nothing below them imports upward.
// Code one Worker alone uses lives in that Worker's folder.

/**
 * The npm packages the ingest Worker (the hot path) must not carry: Hono and its middleware, drizzle,
 * zod and the libraries built on them. `scripts/build-check.ts` reads this rule's `to.path` and fails
 * the build when one appears in the ingest bundle; here, the lint fails when ingest or shared code
 * imports one.
 */
const FRAMEWORKS =
  "^node_modules/(hono|@hono/[^/]+|drizzle-[^/]+|zod|zod-[^/]+|@asteasolutions/zod-to-openapi)/";

/** The API Worker's domain folders: below its web layer (rule domain-below-web). */
const DOMAIN = [
  "analytics",
  "alerts",
  "exports",
  "erasure",
  "data-retention",
  "audit",
  "sso",
  "accounts",
  "query",
  "credentials",
];

/**
 * A rule per Worker: every file in workers/shared/ is reachable from its entry point. One exception: the
 * metric table (telemetry/metrics.ts) sits beside the telemetry field table it refers to, and is read by the
 * API Worker and by the dashboard's browser bundle, which may import nothing from workers/api/ (rule
 * browser-bundle-self-contained); it is pure data with type-only imports (rule metric-table-pure).
 */
const sharedUsedBy = (worker) => ({
  name: `shared-used-by-${worker}`,
  comment:
    `This file in workers/shared/ is not reachable from workers/${worker}/index.ts: shared code is what both ` +
    `Workers use; move a file only one Worker needs into that Worker's folder.`,
  severity: "error",
  from: { path: `^workers/${worker}/index\\.ts$` },
  to: { path: "^workers/shared/", pathNot: "^workers/shared/telemetry/metrics\\.ts$", reachable: false },
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "api-not-into-ingest",
      comment:
        "The API Worker must not import the ingest Worker's code; move what both need to workers/shared/.",
      severity: "error",
      from: { path: "^workers/api/" },
      to: { path: "^workers/ingest/" },
    },
    {
      name: "ingest-not-into-api",
      comment:
        "The ingest Worker must not import the API Worker's code; move what both need to workers/shared/.",
      severity: "error",
      from: { path: "^workers/ingest/" },
      to: { path: "^workers/api/" },
    },
    {
      name: "shared-stays-below",
      comment: "Shared code (workers/shared, durable-objects, schema, proto) must not import either Worker.",
      severity: "error",
      from: { path: "^(workers/shared|durable-objects|schema|proto)/" },
      to: { path: "^workers/(api|ingest)/" },
    },
    {
      name: "shared-no-framework",
      comment:
        "workers/shared/ and the ingest Worker import no framework or ORM (Hono, zod, drizzle): the ingest " +
        "bundle must stay free of them (scripts/build-check.ts), and shared code is in it. Put the " +
        "Hono/zod/drizzle side in workers/api/.",
      severity: "error",
      from: { path: "^workers/(shared|ingest)/" },
      to: { path: FRAMEWORKS },
    },
    sharedUsedBy("api"),
    sharedUsedBy("ingest"),
    {
      name: "browser-bundle-self-contained",
      comment:
        "The dashboard's browser bundle imports only itself and npm packages (and the generated API types), " +
        "and the one pure-data module outside it, the metric table (workers/shared/telemetry/metrics.ts); " +
        "other Worker code would end up in the browser.",
      severity: "error",
      from: { path: "^workers/api/web/client/" },
      to: {
        path: "^(workers|durable-objects|schema|proto)/",
        pathNot: "^workers/api/web/client/|^workers/shared/telemetry/metrics\\.ts$",
      },
    },
    {
      name: "metric-table-pure",
      comment:
        "The metric table is bundled into the browser: it imports types only (nothing of it runs but itself).",
      severity: "error",
      from: { path: "^workers/shared/telemetry/metrics\\.ts$" },
      to: { dependencyTypesNot: ["type-only"] },
    },
    {
      name: "domain-below-web",
      comment:
        "The API Worker's domain (analytics, alerts, exports, erasure, data retention, audit, sso, accounts, " +
        "query, credentials) sits below its web layer: it imports nothing from web/, middleware/ or " +
        "routes/. Take the principal and the clock as values (data-retention/horizon.ts Reader), not the " +
        "request; what pages and middleware share with the domain lives in the domain (the session " +
        "cookie: credentials/session-cookie.ts).",
      severity: "error",
      from: { path: `^workers/api/(${DOMAIN.join("|")})/` },
      to: { path: "^workers/api/(web|middleware|routes)/" },
    },
    {
      name: "no-circular",
      comment:
        "No import circles: a module and what it imports form a tree, so each can be read (and loaded) " +
        "before what uses it. Move what both sides need below both.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "no-unresolvable",
      comment: "An import that resolves to nothing is a typo or a file that moved.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true, pathNot: "^cloudflare:" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // node_modules is not excluded: a package stays in the graph as a leaf, for shared-no-framework.
    exclude: { path: "\\.gen\\.js$" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".d.ts"],
    },
  },
};
