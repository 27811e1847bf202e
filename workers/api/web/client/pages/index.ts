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
import { profiles } from "./profiles.js";
import { projects } from "./projects.js";
import { retention } from "./retention.js";
import { sql } from "./sql.js";

/**
 * The client module of each page, by the id the server's shell names in data-page (the ids of
 * workers/api/web/dashboard.ts DASHBOARD_PAGES, plus "projects" for the project list).
 */
export const PAGES: Record<string, (ctx: PageContext) => void | Promise<void>> = {
  projects,
  overview,
  heatmap,
  compare,
  builds,
  retention,
  funnels,
  insights,
  sql,
  alerts,
  maps,
  profiles,
  content,
};
