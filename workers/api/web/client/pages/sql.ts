import { ApiProblem, api, dataOf } from "../api.js";
import { barChart, timeChart } from "../chart.js";
import type { PageContext } from "../page.js";
import type { SqlKit } from "../sql/kit.js";
import type * as SqlBundle from "../sql/page.js";
import { failed, loading } from "../states.js";

/** The SQL page's bundle (page and CodeMirror), its URL with its hash set by scripts/build-client.ts. */
declare const SQL_BUNDLE_URL: string;

/**
 * The SQL explorer (docs/dashboard.md, "SQL"): its code and editor are a bundle of their own, loaded
 * only here, so the other pages carry none of it.
 */
export async function sql(ctx: PageContext): Promise<void> {
  const status = document.createElement("div");
  ctx.root.append(status);
  loading(status, "Loading the editor…");
  let bundle: typeof SqlBundle;
  try {
    bundle = (await import(SQL_BUNDLE_URL)) as typeof SqlBundle;
  } catch {
    failed(status, new Error("The editor could not be loaded. Reload the page to try again."));
    return;
  }
  status.remove();
  const kit: SqlKit = { api, dataOf, ApiProblem, timeChart, barChart };
  await bundle.sqlPage(ctx, kit);
}
