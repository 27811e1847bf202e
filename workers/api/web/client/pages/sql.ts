import { ApiProblem, api, dataOf } from "../api.js";
import { barChart, timeChart } from "../chart.js";
import type { PageContext } from "../page.js";
import { sqlPage } from "../sql/page.js";

/**
 * The SQL explorer (docs/dashboard.md, "SQL"): registered lazily (pages/index.ts), so this module, the
 * page and CodeMirror are chunks only this page loads; the other pages carry none of it.
 */
export async function sql(ctx: PageContext): Promise<void> {
  await sqlPage(ctx, { api, dataOf, ApiProblem, timeChart, barChart });
}
