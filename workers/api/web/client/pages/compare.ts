import { type Answer, api, dataOf } from "../api.js";
import { type CellRef, cellFromUrl, cellPanel, cellToUrl } from "../cell-panel.js";
import { clear, fmt, h } from "../dom.js";
import { type DrawnCell, drawMap, legend, type MapRecord } from "../map-canvas.js";
import { type Cell, METRICS, metricOf, NO_SAMPLE_FILL } from "../metrics.js";
import type { PageContext } from "../page.js";
import { empty, withStates } from "../states.js";
import { type Control, controlsForm, DAYS_OPTIONS, type Days, type State } from "../url-state.js";

/** Units of builds/compare's metrics (docs/analytics.md: build comparison). All are lower-is-better. */
const UNITS: Record<string, string> = {
  frame_time: "ms",
  memory: "MB",
  gpu_time: "ms",
  "io.read_bytes": "bytes",
  "io.read_time_ms": "ms",
  "io.read_ops": "ops",
  load_time_ms: "ms",
  "mem.vram": "MB",
};

/**
 * Baseline vs candidate: the per-metric p50 and p95 table of builds/compare with its regressions
 * marked, and, on a chosen map, the per-cell difference of the two builds' heatmaps.
 */
export async function compare({ root, projectId }: PageContext): Promise<void> {
  root.append(h("h1", {}, "Build comparison"));
  const body = h("div", {});
  root.append(body);
  let lists: { builds: string[]; maps: MapRecord[] } | null = null;
  await withStates(
    body,
    async () => {
      const [builds, maps] = await Promise.all([
        dataOf(
          api.GET("/v1/projects/{id}/builds", { params: { path: { id: projectId }, query: { days: "90" } } }),
        ),
        dataOf(api.GET("/v1/projects/{id}/maps", { params: { path: { id: projectId } } })),
      ]);
      return { builds: builds.map((b) => b.build_id), maps };
    },
    (l) => {
      lists = l;
    },
  );
  if (!lists) {
    return;
  }
  const { builds, maps } = lists as { builds: string[]; maps: MapRecord[] };
  if (builds.length < 2) {
    empty(
      body,
      "Comparing needs two builds with performance events; this project has fewer in the last 90 days.",
    );
    return;
  }
  const controls: Control[] = [
    { name: "baseline", label: "Baseline build", kind: "text", def: "", list: builds },
    { name: "candidate", label: "Candidate build", kind: "text", def: "", list: builds },
    { name: "days", label: "Period", kind: "select", options: DAYS_OPTIONS, def: "30" },
    {
      name: "map",
      label: "Map",
      kind: "select",
      options: [{ value: "", label: "All maps" }, ...maps.map((m) => ({ value: m.mapId, label: m.name }))],
      def: "",
    },
    { name: "platform", label: "Platform", kind: "text", def: "", placeholder: "all platforms" },
    {
      name: "metric",
      label: "Difference map metric",
      kind: "select",
      options: METRICS.map((m) => ({ value: m.key, label: `${m.label} (${m.unit})` })),
      def: "frame_time",
    },
    {
      name: "cell",
      label: "Cell size",
      kind: "select",
      options: ["5", "10", "25", "50"].map((v) => ({ value: v, label: `${v} units` })),
      def: "25",
    },
  ];
  const table = h("section", { class: "panel compare-table", "aria-label": "Per-metric comparison" });
  const diffMap = h("section", { class: "panel diff-map", "aria-label": "Difference map" });
  // The selected difference-map cell: a switch between the two builds, then the heatmap's cell panel
  // for the build switched to (the candidate unless the URL says side=baseline).
  const buildSwitch = h("div", {
    class: "build-switch",
    role: "group",
    "aria-label": "Build shown in the cell",
  });
  const panel = h("div", {});
  const cellSection = h(
    "section",
    { class: "panel cell-panel", "aria-label": "Selected cell", hidden: true },
    buildSwitch,
    panel,
  );
  const closeCell = () => {
    cellToUrl(null, { side: null });
    cellSection.hidden = true;
    panel.replaceChildren();
  };
  const openCell = (s: State, map: MapRecord, cell: CellRef, side: Side) => {
    cellToUrl(cell, { side: side === "baseline" ? "baseline" : null });
    cellSection.hidden = false;
    buildSwitch.replaceChildren(
      ...(["candidate", "baseline"] as const).map((k) => {
        const b = h(
          "button",
          {
            type: "button",
            class: k === side ? undefined : "secondary",
            "data-side": k,
            "aria-pressed": String(k === side),
          },
          `${k === "candidate" ? "Candidate" : "Baseline"} ${k === "candidate" ? s.candidate : s.baseline}`,
        );
        b.addEventListener("click", () => openCell(s, map, cell, k));
        return b;
      }),
    );
    void cellPanel(panel, {
      projectId,
      mapId: map.mapId,
      mapName: map.name,
      cellSize: Number(s.cell),
      days: heatmapDays(s.days),
      buildId: (side === "baseline" ? s.baseline : s.candidate) || undefined,
      platform: s.platform || undefined,
      metric: s.metric ?? "frame_time",
      cell,
      onClose: closeCell,
    });
  };
  const form = controlsForm(controls, (s) => {
    // Other builds, map, size or filters: the selected cell no longer shows what was chosen.
    closeCell();
    void show(s);
  });
  clear(body, form.form, table, diffMap, cellSection);
  // A first visit compares the two newest builds; the URL then names them, so the link is stable.
  if (!form.state.baseline && !form.state.candidate) {
    form.set("candidate", builds[0] ?? "");
    form.set("baseline", builds[1] ?? "");
  }

  function show(s: State) {
    if (!s.baseline || !s.candidate) {
      empty(table, "Choose a baseline and a candidate build.");
      clear(diffMap);
      return;
    }
    const map = maps.find((m) => m.mapId === s.map);
    return Promise.all([
      withStates(
        table,
        () =>
          dataOf(
            api.GET("/v1/projects/{id}/builds/compare", {
              params: {
                path: { id: projectId },
                query: {
                  baseline: s.baseline ?? "",
                  candidate: s.candidate ?? "",
                  days: s.days as Days,
                  mapId: s.map,
                  platform: s.platform,
                },
              },
            }),
          ),
        (cmp) => renderTable(table, cmp),
      ),
      map
        ? renderDiffMap(diffMap, projectId, map, s, (cell) => openCell(s, map, cell, sideFromUrl())).then(
            (drawn) => {
              const selected = cellFromUrl();
              if (drawn && selected) {
                openCell(s, map, selected, sideFromUrl());
              }
            },
          )
        : emptyMap(diffMap),
    ]);
  }
  await show(form.state);
}

/** The build the cell panel shows. */
type Side = "candidate" | "baseline";

/** The candidate, unless the URL says side=baseline. */
const sideFromUrl = (): Side =>
  new URLSearchParams(location.search).get("side") === "baseline" ? "baseline" : "candidate";

function emptyMap(el: HTMLElement): void {
  empty(el, "Choose a map to see where the candidate is better or worse than the baseline, cell by cell.");
}

function num(v: number | null, digits = true): HTMLElement {
  return h(
    "td",
    { class: "num", "data-value": v === null ? "" : String(v) },
    digits ? fmt(v) : String(v ?? "—"),
  );
}

function renderTable(el: HTMLElement, cmp: Answer<"compareBuilds">): void {
  const regressions = cmp.diffs.filter((d) => d.isRegression).length;
  const builds = h(
    "table",
    { class: "builds-summary" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", {}, ""),
        ["Build", "Events", "Sessions", "Players", "Last seen"].map((t) => h("th", {}, t)),
      ),
    ),
    h(
      "tbody",
      {},
      (["baseline", "candidate"] as const).map((k) => {
        const b = cmp[k];
        return h(
          "tr",
          { "data-build": k },
          h("th", {}, k === "baseline" ? "Baseline" : "Candidate"),
          h("td", {}, b.build_id),
          num(b.event_count),
          num(b.session_count),
          num(b.player_count),
          h("td", {}, b.last_seen || "—"),
        );
      }),
    ),
  );
  const rows = cmp.diffs.map((d) => {
    const unit = UNITS[d.metric] ?? "";
    const verdict = d.isRegression
      ? "Regression"
      : d.diffPct !== null && d.diffPct < 0
        ? "Better"
        : d.baselineP50 === null || d.candidateP50 === null
          ? "No samples"
          : "Same";
    return h(
      "tr",
      {
        "data-metric": d.metric,
        class: d.isRegression ? "regression" : verdict === "Better" ? "improvement" : "",
      },
      h("th", { scope: "row" }, unit ? `${d.metric} (${unit})` : d.metric),
      num(d.baselineP50),
      num(d.candidateP50),
      h(
        "td",
        { class: "num", "data-value": d.diffPct === null ? "" : String(d.diffPct) },
        d.diffPct === null ? "—" : `${d.diffPct > 0 ? "+" : ""}${fmt(d.diffPct)} %`,
      ),
      num(d.baselineTail),
      num(d.candidateTail),
      h("td", { class: "num" }, `${fmt(d.baselineSamples)} / ${fmt(d.candidateSamples)}`),
      h("td", { class: "verdict" }, d.isRegression ? h("strong", {}, "▲ Regression") : verdict),
    );
  });
  el.append(
    h("h2", {}, "Per metric"),
    builds,
    h(
      "p",
      { class: regressions ? "regression" : "improvement", role: "status" },
      regressions
        ? `${regressions} metric${regressions === 1 ? "" : "s"} regressed: the candidate's median is higher than the baseline's.`
        : "No regression: no candidate median is higher than the baseline's.",
    ),
    h(
      "table",
      { class: "diffs" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          [
            "Metric",
            "Baseline p50",
            "Candidate p50",
            "Δ p50",
            "Baseline p95",
            "Candidate p95",
            "Samples (b / c)",
            "",
          ].map((t, i) => h("th", { class: i > 0 && i < 7 ? "num" : "" }, t)),
        ),
      ),
      h("tbody", {}, rows),
    ),
  );
}

/** The heatmap's period closest to the comparison's (the heatmap goes back 30 days at most). */
function heatmapDays(days: string | undefined): "7" | "14" | "30" {
  return days === "7" || days === "14" ? days : "30";
}

/** Draws the difference map; resolves true once drawn (false: empty, failed or superseded). */
async function renderDiffMap(
  el: HTMLElement,
  projectId: string,
  map: MapRecord,
  s: State,
  onSelect: (cell: CellRef) => void,
): Promise<boolean> {
  let drawn = false;
  const metric = metricOf(s.metric ?? "frame_time");
  const cellSize = Number(s.cell);
  const days = heatmapDays(s.days);
  const cellsOf = (buildId: string | undefined) =>
    dataOf(
      api.GET("/v1/projects/{id}/heatmap", {
        params: {
          path: { id: projectId },
          // The cell-size select offers only the API's values (readState keeps no other).
          query: {
            mapId: map.mapId,
            cellSize: s.cell as "5" | "10" | "25" | "50",
            days,
            buildId,
            platform: s.platform,
          },
        },
      }),
    );
  await withStates(
    el,
    () => Promise.all([cellsOf(s.baseline), cellsOf(s.candidate)]),
    async ([base, cand]) => {
      const diff = diffCells(base, cand, metric, cellSize);
      el.append(
        h("h2", {}, `Difference map: ${metric.label}, candidate − baseline`),
        h(
          "p",
          { class: "muted" },
          `${map.name}, last ${days} days${s.days === "90" ? " (the heatmap reaches back 30 days)" : ""}. ` +
            `${fmt(diff.counts.worse)} cells worse, ${fmt(diff.counts.better)} better, ${fmt(diff.counts.same)} unchanged, ` +
            `${fmt(diff.counts.only)} sampled in one build only.`,
        ),
        legend([
          { fill: diffFill(1, true), label: `Worse (up to ${fmt(diff.maxAbs, metric.unit)})` },
          { fill: diffFill(0, true), label: "Unchanged" },
          { fill: diffFill(1, false), label: "Better" },
          { fill: NO_SAMPLE_FILL, label: "One build only" },
        ]),
      );
      await drawMap(el, {
        id: "diff-canvas",
        map,
        cellSize,
        cells: diff.cells,
        label: `${metric.label} difference per cell, ${s.candidate} against ${s.baseline}`,
        onSelect: (cell) => onSelect({ x: cell.x, y: cell.y }),
      });
      drawn = true;
    },
    {
      isEmpty: ([base, cand]) => base.length === 0 && cand.length === 0,
      emptyMessage: "Neither build has performance samples with a position on this map in this period.",
    },
  );
  return drawn;
}

/** Red for worse, green for better, by the size of the change relative to the largest one. */
function diffFill(t: number, worse: boolean): string {
  const u = Math.min(1, Math.max(0, t));
  const light = 92 - 50 * u;
  return worse ? `hsl(0 75% ${light.toFixed(0)}%)` : `hsl(140 60% ${light.toFixed(0)}%)`;
}

/**
 * Per cell: candidate mean − baseline mean of the metric where both builds sampled it. worse/better
 * follow the metric's direction (fps: lower is worse; the others: higher is worse).
 */
export function diffCells(base: Cell[], cand: Cell[], m: (typeof METRICS)[number], size: number) {
  const key = (c: Cell) => `${c.x}:${c.y}`;
  const baseBy = new Map(base.map((c) => [key(c), c]));
  const candBy = new Map(cand.map((c) => [key(c), c]));
  const keys = [...new Set([...baseBy.keys(), ...candBy.keys()])];
  const rows = keys.map((k) => {
    const b = baseBy.get(k);
    const c = candBy.get(k);
    const bv = b ? m.value(b) : null;
    const cv = c ? m.value(c) : null;
    const [x, y] = k.split(":").map(Number) as [number, number];
    return { x, y, bv, cv, d: bv !== null && cv !== null ? cv - bv : null };
  });
  const maxAbs = Math.max(0, ...rows.map((r) => (r.d === null ? 0 : Math.abs(r.d))));
  const counts = { worse: 0, better: 0, same: 0, only: 0 };
  const cells: DrawnCell[] = rows
    .sort((a, b) => a.x - b.x || a.y - b.y)
    .map((r) => {
      const lines = [
        `Cell x ${fmt(r.x)}…${fmt(r.x + size)}, y ${fmt(r.y)}…${fmt(r.y + size)}`,
        `Baseline: ${r.bv === null ? "no sample" : fmt(r.bv, m.unit)}`,
        `Candidate: ${r.cv === null ? "no sample" : fmt(r.cv, m.unit)}`,
      ];
      if (r.d === null) {
        counts.only += 1;
        return { x: r.x, y: r.y, value: null, cls: "one-build", fill: NO_SAMPLE_FILL, lines };
      }
      const worse = m.higherIsBetter ? r.d < 0 : r.d > 0;
      const cls = r.d === 0 ? "same" : worse ? "worse" : "better";
      counts[cls] += 1;
      const t = maxAbs > 0 ? Math.abs(r.d) / maxAbs : 0;
      return {
        x: r.x,
        y: r.y,
        value: r.d,
        cls,
        fill: diffFill(t, cls !== "better"),
        lines: [...lines, `Difference: ${r.d > 0 ? "+" : ""}${fmt(r.d, m.unit)} (${cls})`],
      };
    });
  return { cells, counts, maxAbs };
}
