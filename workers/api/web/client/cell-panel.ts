import { type Answer, api, dataOf, type Schemas } from "./api.js";
import { barChart } from "./chart.js";
import { fmt, h } from "./dom.js";
import { metricOf } from "./metrics.js";
import { withStates } from "./states.js";
import { dataTable, pct } from "./table.js";
import { groupBoundText, hitchText, whyText } from "./why.js";

// The panel a heatmap cell opens: the chosen metric's distribution, who suffers (breakdowns), the
// worst sessions there, and "Copy repro" (the repro as JSON). The cell is in the page's URL as
// at=<x>,<y>[,<z>], so the panel is shareable.

export type CellRef = { x: number; y: number; z?: number };

type Drilldown = Answer<"getHeatmapCell">;

const DIMENSIONS: Array<[keyof Drilldown["breakdowns"], string]> = [
  ["build_id", "Build"],
  ["platform", "Platform"],
  ["engine_version", "Engine"],
  ["gpu", "GPU"],
  ["device_model", "Device"],
  ["resolution", "Resolution"],
  ["os_version", "OS"],
];

/** The cell of the URL's `at`, or null. */
export function cellFromUrl(): CellRef | null {
  const at = new URLSearchParams(location.search).get("at");
  const parts = at?.split(",").map(Number) ?? [];
  if (parts.length < 2 || parts.length > 3 || parts.some((n) => !Number.isFinite(n))) {
    return null;
  }
  const [x = 0, y = 0, z] = parts;
  return z === undefined ? { x, y } : { x, y, z };
}

/**
 * Writes (or, with null, removes) the selected cell in the URL, keeping every other parameter; `extra`
 * sets (a string) or removes (null) parameters that belong with the cell.
 */
export function cellToUrl(cell: CellRef | null, extra: Record<string, string | null> = {}): void {
  const params = new URLSearchParams(location.search);
  for (const [k, v] of Object.entries(extra)) {
    if (v === null) {
      params.delete(k);
    } else {
      params.set(k, v);
    }
  }
  if (cell) {
    params.set("at", [cell.x, cell.y, ...(cell.z === undefined ? [] : [cell.z])].join(","));
  } else {
    params.delete("at");
  }
  const qs = params.toString().replaceAll("%2C", ",");
  history.replaceState(null, "", `${location.pathname}${qs ? `?${qs}` : ""}`);
}

const deviceText = (d: Drilldown["repro"]["device"]) =>
  d ? [d.deviceModel, d.gpu, d.resolution, d.osVersion].filter(Boolean).join(", ") : "—";

export function cellPanel(
  panel: HTMLElement,
  q: {
    projectId: string;
    mapId: string;
    mapName: string;
    cellSize: number;
    days: string;
    buildId?: string;
    platform?: string;
    profileId?: string;
    metric: string;
    cell: CellRef;
    onClose: () => void;
  },
): Promise<void> {
  panel.hidden = false;
  return withStates(
    panel,
    () =>
      dataOf(
        api.GET("/v1/projects/{id}/heatmap/cell", {
          params: {
            path: { id: q.projectId },
            query: {
              mapId: q.mapId,
              x: String(q.cell.x),
              y: String(q.cell.y),
              z: q.cell.z === undefined ? undefined : String(q.cell.z),
              // The heatmap's controls offer only these (readState keeps no other value).
              cellSize: String(q.cellSize) as "5" | "10" | "25" | "50",
              days: q.days as "1" | "7" | "14" | "30",
              buildId: q.buildId,
              platform: q.platform,
              profileId: q.profileId,
              metric: q.metric as Schemas["HeatmapCellDrilldown"]["metric"],
            },
          },
        }),
      ),
    (d) => {
      const metric = d.metric;
      const dist = d.distributions[metric];
      const { unit } = metricOf(metric);
      const close = h("button", { type: "button", class: "secondary", "data-action": "close-cell" }, "Close");
      close.addEventListener("click", () => q.onClose());
      const status = h("span", { class: "muted", role: "status", "data-copy-status": "" });
      const copy = h("button", { type: "button", "data-action": "copy-repro" }, "Copy repro");
      const repro = JSON.stringify(
        { ...d.repro, mapName: q.mapName, cellSize: d.cellSize, days: Number(q.days) },
        null,
        2,
      );
      copy.addEventListener("click", async () => {
        try {
          await navigator.clipboard.writeText(repro);
          status.textContent = "Repro copied to the clipboard.";
        } catch {
          status.textContent = "The browser refused the clipboard: select the repro below and copy it.";
        }
      });
      const b = d.repro.bounds;
      panel.append(
        h(
          "div",
          { class: "cell-panel-head" },
          h("h2", {}, `Cell x ${fmt(b.minX)}…${fmt(b.maxX)}, y ${fmt(b.minY)}…${fmt(b.maxY)}`),
          close,
        ),
        h(
          "p",
          { class: "summary", "data-cell-summary": "" },
          `${fmt(d.samples)} samples, ${fmt(d.sessions)} sessions, ${fmt(d.players)} players. ` +
            `${metric}: p50 ${fmt(dist.p50, unit)}, p95 ${fmt(dist.p95, unit)}, p99 ${fmt(dist.p99, unit)}.`,
        ),
        h("p", { class: "why", "data-cell-why": "" }, whyText(d.why, d.breakdowns.gpu)),
        h("p", { class: "why", "data-cell-hitches": "" }, hitchText(d.why)),
      );
      if (d.profile) {
        panel.append(
          dataTable(
            "cell-profile",
            [
              { label: `${d.profile.name}: metric`, cell: (m) => m.metric },
              { label: "Samples", num: true, cell: (m) => fmt(m.samples) },
              { label: "Worse than good", num: true, cell: (m) => pct(m.failingGoodPct) },
              { label: "Worse than warn", num: true, cell: (m) => pct(m.failingWarnPct) },
            ],
            d.profile.marks,
          ),
        );
      }
      if (d.samples > 0) {
        const labels = dist.counts.map((_, i) =>
          i === 0
            ? `< ${fmt(dist.edges[0])}`
            : i === dist.edges.length
              ? `≥ ${fmt(dist.edges[i - 1])}`
              : `${fmt(dist.edges[i - 1])}–${fmt(dist.edges[i])}`,
        );
        // Only the span that holds samples: 42 buckets mostly empty would hide the shape.
        const first = dist.counts.findIndex((n) => n > 0);
        const last = dist.counts.length - 1 - [...dist.counts].reverse().findIndex((n) => n > 0);
        barChart(panel, {
          title: `${metric} histogram (${unit})`,
          labels: labels.slice(first, last + 1),
          values: dist.counts.slice(first, last + 1),
          height: 200,
        });
      }
      for (const [dim, label] of DIMENSIONS) {
        const rows = d.breakdowns[dim];
        if (rows.length) {
          panel.append(
            h("h3", {}, `By ${label.toLowerCase()}`),
            dataTable(
              `cell-${dim}`,
              [
                { label, cell: (g) => g.key ?? "not reported" },
                { label: "Samples", num: true, cell: (g) => fmt(g.samples) },
                { label: "Mean FPS", num: true, cell: (g) => fmt(g.meanFps) },
                { label: "p95 frame time", num: true, cell: (g) => fmt(g.p95FrameTime, "ms") },
                { label: "Failing", num: true, cell: (g) => pct(g.failingPct) },
                { label: "Slow frames", cell: (g) => groupBoundText(g) },
                { label: "Hitches/min", num: true, cell: (g) => fmt(g.hitchesPerMinute) },
              ],
              rows,
            ),
          );
        }
      }
      panel.append(
        h("h3", {}, "Worst sessions"),
        dataTable(
          "cell-sessions",
          [
            { label: "Session", cell: (s) => s.sessionId },
            { label: "Player", cell: (s) => s.player },
            { label: "Build", cell: (s) => s.buildId || "—" },
            { label: "Platform", cell: (s) => s.platform || "—" },
            { label: "Device", cell: (s) => deviceText(s.device) },
            { label: "p95 frame time", num: true, cell: (s) => fmt(s.p95FrameTime, "ms") },
            { label: "First", cell: (s) => s.firstSeen.slice(0, 19).replace("T", " ") },
            { label: "Last", cell: (s) => s.lastSeen.slice(0, 19).replace("T", " ") },
          ],
          d.worstSessions,
        ),
        h("h3", {}, "Repro"),
        h("div", { class: "repro-actions" }, copy, status),
        h("pre", { class: "repro", "data-repro": "" }, repro),
      );
    },
  );
}
