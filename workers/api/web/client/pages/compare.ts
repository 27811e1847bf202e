import { api, dataOf } from "../api.js";
import { type CellRef, cellFromUrl, cellPanel, cellToUrl } from "../cell-panel.js";
import { diffFill, UNCHANGED_FILL } from "../diff-colours.js";
import { clear, fmt, h } from "../dom.js";
import { type DrawnCell, drawMap, legend, type MapRecord } from "../map-canvas.js";
import { type Cell, METRICS, metricOf, NO_SAMPLE_FILL } from "../metrics.js";
import type { PageContext } from "../page.js";
import { empty, withStates } from "../states.js";
import { type Control, controlsForm, DAYS_OPTIONS, type Days, type State } from "../url-state.js";
import { groupBoundText, verdictCountsText } from "../why.js";

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
      name: "group",
      label: "Verdicts by",
      kind: "select",
      options: GROUPINGS.map((g) => ({ value: g.value, label: g.label })),
      def: "platform",
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
  const groups = h("section", { class: "panel verdict-groups", "aria-label": "Verdicts per group" });
  const sessions = h("section", { class: "panel session-verdicts", "aria-label": "Sessions by verdict" });
  const sigMap = h("section", { class: "panel significant-map", "aria-label": "Significant cells" });
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
  clear(body, form.form, table, groups, sessions, sigMap, diffMap, cellSection);
  // A first visit compares the two newest builds; the URL then names them, so the link is stable.
  if (!form.state.baseline && !form.state.candidate) {
    form.set("candidate", builds[0] ?? "");
    form.set("baseline", builds[1] ?? "");
  }

  function show(s: State) {
    if (!s.baseline || !s.candidate) {
      empty(table, "Choose a baseline and a candidate build.");
      clear(diffMap);
      clear(groups);
      clear(sessions);
      clear(sigMap);
      return;
    }
    const map = maps.find((m) => m.mapId === s.map);
    return Promise.all([
      withStates(
        table,
        () => fetchCompare(projectId, s),
        (cmp) => renderTable(table, cmp),
      ),
      withStates(
        groups,
        () => fetchRegressions(projectId, s),
        (r) => renderGroups(groups, r, s),
      ),
      withStates(
        sessions,
        () => fetchRegressions(projectId, s, undefined, "poor_session_share"),
        (r) => renderSessionVerdicts(sessions, r),
      ),
      map ? renderSignificant(sigMap, projectId, map, s) : emptySignificant(sigMap),
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

const fetchCompare = (projectId: string, s: State) =>
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
  );
type Comparison = Awaited<ReturnType<typeof fetchCompare>>;

/** What a verdict says, to a person. */
const VERDICT_TEXT: Record<string, string> = {
  regressed: "▲ Regressed",
  improved: "▼ Improved",
  no_change: "No change",
  insufficient_data: "Too few sessions",
};

/** Colours a person can tell apart, colour-blind safe (Okabe–Ito vermillion and blue). */
const SIG_FILL = { regressed: "#d55e00", improved: "#0072b2" } as const;

const signedPct = (v: number) => `${v > 0 ? "+" : ""}${fmt(v)} %`;
const intervalText = (ci: readonly number[] | null | undefined) =>
  ci && ci.length === 2 ? `${signedPct(ci[0] as number)} to ${signedPct(ci[1] as number)}` : "—";

function renderTable(el: HTMLElement, cmp: Comparison): void {
  // A regression is a verdict, not a higher p50: noise between a few sessions is never called one.
  const regressions = cmp.diffs.filter((d) => d.verdict === "regressed").length;
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
    const text =
      d.verdict === null
        ? d.baselineP50 === null || d.candidateP50 === null
          ? "No samples"
          : "Not judged (p50 only)"
        : d.verdict === "insufficient_data"
          ? `Too few sessions (${fmt(d.baselineSessions)} / ${fmt(d.candidateSessions)}, 20 each needed)`
          : (VERDICT_TEXT[d.verdict] ?? d.verdict);
    return h(
      "tr",
      {
        "data-metric": d.metric,
        "data-verdict": d.verdict ?? "",
        class: d.verdict === "regressed" ? "regression" : d.verdict === "improved" ? "improvement" : "",
      },
      h("th", { scope: "row" }, unit ? `${d.metric} (${unit})` : d.metric),
      num(d.baselineP50),
      num(d.candidateP50),
      h(
        "td",
        { class: "num", "data-value": d.diffPct === null ? "" : String(d.diffPct) },
        d.diffPct === null ? "—" : signedPct(d.diffPct),
      ),
      num(d.baselineTail),
      num(d.candidateTail),
      h("td", { class: "num" }, `${fmt(d.baselineSamples)} / ${fmt(d.candidateSamples)}`),
      h(
        "td",
        { class: "num interval", "data-ci95": d.ci95 ? d.ci95.join(",") : "" },
        d.sessionDiffPct === null ? "—" : `${signedPct(d.sessionDiffPct)} (${intervalText(d.ci95)})`,
      ),
      h("td", { class: "verdict" }, d.verdict === "regressed" ? h("strong", {}, text) : text),
    );
  });
  el.append(
    h("h2", {}, "Per metric"),
    builds,
    h(
      "p",
      { class: regressions ? "regression" : "improvement", role: "status" },
      regressions
        ? `${regressions} metric${regressions === 1 ? "" : "s"} regressed: the 95 % interval of the change of the median session lies wholly on the worse side and the change is at least 3 %.`
        : "No regression: no metric's change is both outside the noise (95 % interval over sessions) and at least 3 %.",
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
            "Δ median session (95 % interval)",
            "Verdict",
          ].map((t, i) => h("th", { class: i > 0 && i < 8 ? "num" : "" }, t)),
        ),
      ),
      h("tbody", {}, rows),
    ),
  );
}

/** The groupings of builds/regressions (`by`), as the page offers them. */
const GROUPINGS = [
  { value: "platform", label: "Platform" },
  { value: "gpu", label: "GPU" },
  { value: "gpu_tier", label: "GPU tier" },
  { value: "device_model", label: "Device model" },
  { value: "resolution", label: "Resolution" },
  { value: "os_version", label: "OS version" },
] as const;
type Grouping = (typeof GROUPINGS)[number]["value"];

/** The metric the groups and the significant cells judge: the difference map's, as builds/regressions names it. */
const regressionMetric = (s: State) =>
  (s.metric ?? "frame_time") as "frame_time" | "fps" | "gpu_time" | "memory";

const fetchRegressions = (
  projectId: string,
  s: State,
  mapId?: string,
  metric: ReturnType<typeof regressionMetric> | "poor_session_share" = regressionMetric(s),
) =>
  dataOf(
    api.GET("/v1/projects/{id}/builds/regressions", {
      params: {
        path: { id: projectId },
        query: {
          baseline: s.baseline ?? "",
          candidate: s.candidate ?? "",
          metric,
          by: (GROUPINGS.some((g) => g.value === s.group) ? s.group : "platform") as Grouping,
          days: s.days as Days,
          mapId,
        },
      },
    }),
  );
type Regressions = Awaited<ReturnType<typeof fetchRegressions>>;

/** The verdicts per group (and overall) of the chosen metric and grouping, worst first, with intervals. */
function renderGroups(el: HTMLElement, r: Regressions, s: State): void {
  const label = GROUPINGS.find((g) => g.value === r.by)?.label ?? r.by;
  const row = (g: Regressions["overall"], name: string) =>
    h(
      "tr",
      {
        "data-group": g.key ?? "",
        "data-verdict": g.verdict,
        class: g.verdict === "regressed" ? "regression" : g.verdict === "improved" ? "improvement" : "",
      },
      h("th", { scope: "row" }, name),
      num(g.baseline.sessions),
      num(g.candidate.sessions),
      num(g.baseline.median),
      num(g.candidate.median),
      h("td", { class: "num" }, g.diffPct === null ? "—" : signedPct(g.diffPct)),
      h("td", { class: "num interval", "data-ci95": g.ci95 ? g.ci95.join(",") : "" }, intervalText(g.ci95)),
      h("td", { class: "verdict" }, VERDICT_TEXT[g.verdict] ?? g.verdict),
    );
  el.append(
    h("h2", {}, `Verdicts by ${label.toLowerCase()}: ${metricOf(regressionMetric(s)).label}`),
    h(
      "p",
      { class: "muted" },
      "One value per session (the median of its samples); a group is regressed only when the 95 % interval of the change " +
        "(corrected for the number of groups) lies wholly on the worse side and the change is at least 3 %; " +
        "groups with fewer than 20 sessions of either build are not judged.",
    ),
    h(
      "table",
      { class: "groups" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          [
            label,
            "Sessions (b)",
            "Sessions (c)",
            "Median (b)",
            "Median (c)",
            "Change",
            "95 % interval",
            "Verdict",
          ].map((t, i) => h("th", { class: i > 0 && i < 7 ? "num" : "" }, t)),
        ),
      ),
      h(
        "tbody",
        {},
        row(r.overall, "All sessions"),
        r.groups.map((g) => row(g, g.key ?? "not sent")),
      ),
    ),
  );
}

/**
 * Each group's sessions by verdict on both builds, the change of the poor sessions' share (judged as the
 * medians are, in points), what bounds the candidate's slow frames and both builds' hitches per minute.
 */
function renderSessionVerdicts(el: HTMLElement, r: Regressions): void {
  const label = GROUPINGS.find((g) => g.value === r.by)?.label ?? r.by;
  const points = (v: number) => `${v > 0 ? "+" : ""}${fmt(v)} pts`;
  const rate = (v: number | null | undefined) => (v === null || v === undefined ? "—" : fmt(v));
  const row = (g: Regressions["overall"], name: string) =>
    h(
      "tr",
      {
        "data-group": g.key ?? "",
        "data-verdict": g.verdict,
        class: g.verdict === "regressed" ? "regression" : g.verdict === "improved" ? "improvement" : "",
      },
      h("th", { scope: "row" }, name),
      h("td", { "data-build-side": "baseline" }, verdictCountsText(g.baseline.sessionVerdicts)),
      h("td", { "data-build-side": "candidate" }, verdictCountsText(g.candidate.sessionVerdicts)),
      h(
        "td",
        { class: "num", "data-ci95": g.ci95 ? g.ci95.join(",") : "" },
        g.diffPct === null
          ? "—"
          : `${points(g.diffPct)}${g.ci95 ? ` (${points(g.ci95[0] as number)} to ${points(g.ci95[1] as number)})` : ""}`,
      ),
      h("td", { class: "verdict" }, VERDICT_TEXT[g.verdict] ?? g.verdict),
      h("td", { class: "bound" }, g.candidate.frames ? groupBoundText(g.candidate.frames) : "—"),
      h(
        "td",
        { class: "num" },
        `${rate(g.baseline.frames?.hitchesPerMinute)} → ${rate(g.candidate.frames?.hitchesPerMinute)}`,
      ),
    );
  el.append(
    h("h2", {}, `Sessions by verdict, by ${label.toLowerCase()}`),
    h(
      "p",
      { class: "muted" },
      "Each session is poor when over half its heartbeats miss its display's frame budget or any froze (700 ms), " +
        "acceptable when over a quarter miss it or over 5 % are hitches (over twice its median frame), else good; " +
        "sessions under 6 heartbeats are not judged. The change of the poor share is judged as the medians are.",
    ),
    h(
      "table",
      { class: "session-verdicts" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          [
            label,
            "Baseline",
            "Candidate",
            "Δ poor share (95 % interval)",
            "Verdict",
            "Candidate's slow frames",
            "Hitches / min (b → c)",
          ].map((t, i) => h("th", { class: i === 3 || i === 6 ? "num" : "" }, t)),
        ),
      ),
      h(
        "tbody",
        {},
        row(r.overall, "All sessions"),
        r.groups.map((g) => row(g, g.key ?? "not sent")),
      ),
    ),
  );
}

function emptySignificant(el: HTMLElement): void {
  empty(el, "Choose a map to see the cells where the candidate is significantly worse or better.");
}

/** The map with only its significant cells (builds/regressions' cells, 25 units), in two colours. */
async function renderSignificant(
  el: HTMLElement,
  projectId: string,
  map: MapRecord,
  s: State,
): Promise<void> {
  const metric = metricOf(regressionMetric(s));
  await withStates(
    el,
    () => fetchRegressions(projectId, s, map.mapId),
    async (r) => {
      const counts = {
        regressed: r.cells.filter((c) => c.verdict === "regressed").length,
        improved: r.cells.filter((c) => c.verdict === "improved").length,
      };
      el.append(
        h("h2", {}, `Significant cells: ${metric.label}`),
        h(
          "p",
          { class: "muted", role: "status" },
          `${map.name}: ${fmt(counts.regressed)} cells significantly worse, ${fmt(counts.improved)} significantly better ` +
            "(cells of 25 units, the same rules as the groups); the others are left blank.",
        ),
        legend([
          { fill: SIG_FILL.regressed, label: "Worse (regressed)" },
          { fill: SIG_FILL.improved, label: "Better (improved)" },
        ]),
      );
      await drawMap(el, {
        id: "significant-canvas",
        map,
        cellSize: r.cells[0]?.cellSize ?? 25,
        cells: r.cells
          .filter((c) => c.verdict === "regressed" || c.verdict === "improved")
          .sort((a, b) => a.x - b.x || a.y - b.y)
          .map((c) => ({
            x: c.x,
            y: c.y,
            value: c.diffPct,
            cls: c.verdict,
            fill: c.verdict === "regressed" ? SIG_FILL.regressed : SIG_FILL.improved,
            lines: [
              `Cell x ${fmt(c.x)}…${fmt(c.x + c.cellSize)}, y ${fmt(c.y)}…${fmt(c.y + c.cellSize)}`,
              `${VERDICT_TEXT[c.verdict]}: ${c.diffPct === null ? "—" : signedPct(c.diffPct)} (${intervalText(c.ci95)})`,
              `Sessions: ${fmt(c.baseline.sessions)} baseline, ${fmt(c.candidate.sessions)} candidate`,
            ],
          })),
        label: `Cells where ${s.candidate} is significantly worse or better than ${s.baseline}`,
      });
    },
    {
      isEmpty: (r) => !r.cells.some((c) => c.verdict === "regressed" || c.verdict === "improved"),
      emptyMessage:
        "No cell of this map is significantly worse or better (or none has 20 sessions of each build).",
    },
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
          { fill: diffFill(0, true), label: "Slightly worse" },
          { fill: UNCHANGED_FILL, label: "Unchanged" },
          { fill: diffFill(0, false), label: "Slightly better" },
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
        fill: cls === "same" ? UNCHANGED_FILL : diffFill(t, cls === "worse"),
        lines: [...lines, `Difference: ${r.d > 0 ? "+" : ""}${fmt(r.d, m.unit)} (${cls})`],
      };
    });
  return { cells, counts, maxAbs };
}
