import type { PageContext } from "../page.js";
import { alerts } from "./alerts.js";
import { builds } from "./builds.js";
import { compare } from "./compare.js";
import { content } from "./content.js";
import { funnels } from "./funnels.js";
import { heatmap } from "./heatmap.js";
import { insights } from "./insights.js";
import { maps } from "./maps.js";
import { overview } from "./overview.js";
import { playerRetention } from "./player-retention.js";
import { profiles } from "./profiles.js";
import { projects } from "./projects.js";

type Page = (ctx: PageContext) => void | Promise<void>;

/**
 * A page loaded on demand: its module, and whatever only it uses, is a chunk of its own
 * (scripts/build-client.ts), so the script every other page loads does not grow with it.
 */
function lazy(load: () => Promise<Page>): Page {
  return async (ctx) => (await load())(ctx);
}

/**
 * The client module of each page, by the id the server's shell names in data-page (the ids of
 * workers/api/web/dashboard.ts DASHBOARD_PAGES, plus "projects" for the project list).
 */
export const PAGES: Record<string, Page> = {
  projects,
  overview,
  heatmap,
  compare,
  builds,
  retention: playerRetention,
  funnels,
  insights,
  sql: lazy(() => import("./sql.js").then((m) => m.sql)),
  alerts,
  maps,
  profiles,
  content,
  exports: lazy(() => import("./exports.js").then((m) => m.exports)),
  erasure: lazy(() => import("./erasure.js").then((m) => m.erasure)),
  "dead-letters": lazy(() => import("./dead-letters.js").then((m) => m.deadLetters)),
};
