// The house rules for imports, checked by `npm run lint` (dependency-cruiser).
//
//   workers/api/      the API Worker: Web API, pages, alerting, exports, erasure, notifications
//   workers/ingest/   the ingest Worker: POST /v1/events and the events queue's consumer
//   workers/shared/   code both Workers use; it imports neither of them
//   durable-objects/, schema/, proto/: below everything, like workers/shared/
//
// A Worker's folder never imports the other Worker's folder, and nothing below them imports upward.
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
      name: "no-unresolvable",
      comment: "An import that resolves to nothing is a typo or a file that moved.",
      severity: "error",
      from: {},
      to: { couldNotResolve: true, pathNot: "^cloudflare:" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "(^|/)node_modules/|\\.gen\\.js$" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js", ".d.ts"],
    },
  },
};
