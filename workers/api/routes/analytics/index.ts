import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { defaultHook } from "../../openapi.js";
import * as builds from "./builds.js";
import * as pinBaseline from "./builds-baseline-pin.js";
import * as unpinBaseline from "./builds-baseline-unpin.js";
import * as compare from "./compare.js";
import * as dashboard from "./dashboard.js";
import * as funnels from "./funnels.js";
import * as heatmap from "./heatmap.js";
import * as heatmapCell from "./heatmap-cell.js";
import * as insights from "./insights.js";
import * as playerRetention from "./player-retention.js";
import * as regressions from "./regressions.js";

/** Analytics reads of one project, all computed in ClickHouse; analytics:read, keys or tokens. */
export const analyticsApp = new OpenAPIHono<AppEnv>({ defaultHook });
for (const r of [
  dashboard,
  heatmapCell,
  heatmap,
  playerRetention,
  funnels,
  insights,
  builds,
  compare,
  regressions,
  pinBaseline,
  unpinBaseline,
]) {
  r.register(analyticsApp);
}
