import type { WorstCell, WorstCellsRecord } from "../../../schema/pg/columns.js";
import { type AlertMetricKey, BUDGET_SHARE } from "../../shared/telemetry/metrics.js";

/**
 * Deep links of an evaluation into the dashboard: its heatmap page set to the map (as events name it),
 * metric (the "Frame budget" mode for a budget share), profile, build, cell size and days the evaluation
 * judged, and each worst cell's panel on it
 * (`&at=x,y`). A rule judges every build, so `build` is empty: all builds, as the rule saw them. The
 * contract of these query strings is the heatmap page's (workers/api/web/client/pages/heatmap.ts).
 */
export type EvaluationLinks = { heatmap: string };
export type LinkedCell = WorstCell & { link: string };

export type LinkScope = {
  /** The app's public origin (APP_URL); empty: links are root-relative paths. */
  origin: string;
  projectId: string;
  metric: AlertMetricKey;
  profileId: string;
  record: WorstCellsRecord;
};

export function heatmapLink(s: LinkScope): string {
  const q = new URLSearchParams({
    map: s.record.mapId,
    ...(s.metric === BUDGET_SHARE.key ? { mode: "budget" } : { metric: s.metric }),
    profile: s.profileId,
    build: "",
    cell: String(s.record.cellSize),
    days: String(s.record.days),
  });
  return `${s.origin.replace(/\/+$/, "")}/projects/${s.projectId}/heatmap?${q}`;
}

/** A cell's panel: the heatmap link with `at` = the cell's origin (alert cells are 2-D: no z). */
export function cellLink(heatmap: string, cell: Pick<WorstCell, "x" | "y">): string {
  return `${heatmap}&at=${cell.x},${cell.y}`;
}

/** The links and linked worst cells of one evaluation. */
export function linked(s: LinkScope): { links: EvaluationLinks; worstCells: LinkedCell[] } {
  const heatmap = heatmapLink(s);
  return {
    links: { heatmap },
    worstCells: s.record.cells.map((c) => ({ ...c, link: cellLink(heatmap, c) })),
  };
}
