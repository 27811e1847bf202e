import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ApiError } from "../../../shared/errors.js";
import { cached, cacheKey } from "../../analytics/cache.js";
import { compareBuilds } from "../../analytics/compare.js";
import { eventMapId } from "../../analytics/maps.js";
import { withVerdicts } from "../../analytics/verdicts.js";
import type { AppEnv } from "../../context.js";
import { windowFor } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, ProjectIdParam, policy } from "../../openapi.js";
import { BuildComparisonSchema, CompareQuery } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/projects/{id}/builds/compare",
  operationId: "compareBuilds",
  tags: ["Analytics"],
  summary: "Two builds' exact p50 and p95 per performance metric, and the candidate's change",
  description:
    "Metrics frame_time, memory, gpu_time, io.read_bytes, io.read_time_ms, io.read_ops, load_time_ms and mem.vram, all lower-is-better (memory and mem.vram in MB). Per metric: each build's exact p50 and tail (p95) over its samples in the window and filters, diffPct = (candidateP50 − baselineP50) / baselineP50 × 100 (null when the baseline p50 is 0 or a build has no sample) and isRegression = candidateP50 > baselineP50; clients apply their own tolerance to diffPct. For frame_time, memory and gpu_time, verdict and ci95 judge the change with statistics over sessions, as builds/regressions does with its defaults (each session's median; at least 20 sessions per build, else insufficient_data; regressed only when the 95 % interval of the change of the median session value, sessionDiffPct, lies wholly above 0 and the change is at least 3 %), overall or for the platform filter's group; null for the other metrics. An unknown build id is a build without samples. Cached about 60 seconds per project and parameters; fresh=1 recomputes and refreshes the cache.",
  ...policy({ scope: "analytics:read", project: "path" }),
  request: { params: ProjectIdParam, query: CompareQuery },
  responses: {
    200: envelope(BuildComparisonSchema, "The two builds and one diff per metric."),
    ...errorResponses,
  },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    // A build compared with itself is a zero diff that would pass every CI gate.
    if (q.baseline === q.candidate) {
      throw new ApiError("BAD_REQUEST", "query.candidate: must differ from baseline", {
        extensions: { field: "query.candidate" },
      });
    }
    // Authentication, scope and project checks have all run before the cache is consulted.
    const project = c.get("project");
    const days = Number(q.days);
    const mapId = q.mapId === undefined ? undefined : await eventMapId(c.get("db"), project.id, q.mapId);
    const query = { baseline: q.baseline, candidate: q.candidate, mapId, platform: q.platform };
    const w = await windowFor(readerOf(c), days);
    // The horizon too: an answer cached before a retention change is never served after it.
    const key = cacheKey("builds-compare", project, { days, ...query, retainedFrom: w.retainedFrom });
    const data = await cached(
      key,
      q.fresh === "1",
      // The comparison and the verdicts' session values: two reads, side by side.
      () => withVerdicts(c.get("ch"), project.id, w, query, compareBuilds(c.get("ch"), project.id, w, query)),
      (p) => c.executionCtx.waitUntil(p),
      (stored) => BuildComparisonSchema.parse(stored),
    );
    return c.json({ success: true as const, data }, 200);
  });
}
