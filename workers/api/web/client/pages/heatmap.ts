import { api, dataOf } from "../api.js";
import { boundCells } from "../bound-cells.js";
import { budgetCells } from "../budget-cells.js";
import { cellFromUrl, cellPanel, cellToUrl } from "../cell-panel.js";
import { clear, fmt, h } from "../dom.js";
import { hitchPaint } from "../hitch-paint.js";
import { type DrawnCell, drawMap, legend, type MapRecord, rampColour } from "../map-canvas.js";
import {
  type Cell,
  type CellTails,
  JUDGEMENT_FILL,
  judge,
  METRICS,
  type Metric,
  metricOf,
  NO_SAMPLE_FILL,
  type Profile,
} from "../metrics.js";
import type { PageContext } from "../page.js";
import { empty, withStates } from "../states.js";
import { type Control, controlsForm, type State } from "../url-state.js";

/**
 * The performance heatmap over the map image: cells of the chosen metric coloured good / warn / bad
 * by a threshold profile (or on a continuous scale without one), and an events mode counting one
 * event name, for designers.
 */
export async function heatmap({ root, projectId }: PageContext): Promise<void> {
  root.append(h("h1", {}, "Heatmap"));
  const body = h("div", {});
  root.append(body);
  const lists = await loadLists(body, projectId);
  if (!lists) {
    return;
  }
  const { maps, profiles, builds } = lists;
  if (maps.length === 0) {
    empty(
      body,
      "This project has no map yet. Upload a map image with its world bounds (Maps), then its heatmap is drawn here.",
    );
    return;
  }
  const controls: Control[] = [
    {
      name: "map",
      label: "Map",
      kind: "select",
      options: maps.map((m) => ({ value: m.mapId, label: m.name })),
      def: maps[0]?.mapId ?? "",
    },
    {
      name: "mode",
      label: "Mode",
      kind: "select",
      options: [
        { value: "performance", label: "Performance" },
        { value: "budget", label: "Frame budget (share within one refresh)" },
        { value: "bound", label: "Bound by (what slows the frames)" },
        { value: "hitches", label: "Hitches (first-entry stutter apart)" },
        { value: "events", label: "Events" },
      ],
      def: "performance",
    },
    {
      name: "metric",
      label: "Metric",
      kind: "select",
      options: METRICS.map((m) => ({ value: m.key, label: `${m.label} (${m.unit})` })),
      def: "fps",
    },
    { name: "event", label: "Event name", kind: "text", def: "", placeholder: "e.g. player_death" },
    {
      name: "profile",
      label: "Threshold profile",
      kind: "select",
      options: [
        { value: "", label: "None (continuous scale)" },
        ...profiles.map((p) => ({ value: p.id, label: p.name })),
      ],
      def: "",
    },
    {
      name: "days",
      label: "Period",
      kind: "select",
      options: ["1", "7", "14", "30"].map((d) => ({
        value: d,
        label: d === "1" ? "Today" : `Last ${d} days`,
      })),
      def: "7",
    },
    {
      name: "cell",
      label: "Cell size",
      kind: "select",
      options: ["5", "10", "25", "50"].map((v) => ({ value: v, label: `${v} units` })),
      def: "25",
    },
    { name: "build", label: "Build", kind: "text", def: "", placeholder: "all builds", list: builds },
    { name: "platform", label: "Platform", kind: "text", def: "", placeholder: "all platforms" },
  ];
  const view = h("div", { class: "panel heatmap-view" });
  const panel = h("section", { class: "panel cell-panel", "aria-label": "Selected cell", hidden: true });
  const form = controlsForm(controls, (s) => {
    // Another map, size or filter: the selected cell no longer names the same place.
    cellToUrl(null);
    panel.hidden = true;
    void draw(s);
  });
  clear(body, form.form, view, panel);
  const openCell = (s: State, map: MapRecord, cell: { x: number; y: number }) => {
    cellToUrl(cell);
    void cellPanel(panel, {
      projectId,
      mapId: map.mapId,
      mapName: map.name,
      cellSize: Number(s.cell),
      days: s.days ?? "7",
      buildId: s.build || undefined,
      platform: s.platform || undefined,
      profileId: s.profile || undefined,
      metric: s.metric ?? "fps",
      cell,
      onClose: () => {
        cellToUrl(null);
        panel.hidden = true;
        panel.replaceChildren();
      },
    });
  };
  const modeFields = (s: State) => {
    const events = s.mode === "events";
    form.form.querySelector<HTMLElement>('label[for="ctl-event"]')?.toggleAttribute("hidden", !events);
    const uses = modeOf(s);
    form.form.querySelector<HTMLElement>('label[for="ctl-metric"]')?.toggleAttribute("hidden", !uses.metric);
    form.form
      .querySelector<HTMLElement>('label[for="ctl-profile"]')
      ?.toggleAttribute("hidden", !uses.profile);
  };

  function draw(s: State) {
    modeFields(s);
    const map = maps.find((m) => m.mapId === s.map) ?? (maps[0] as MapRecord);
    const events = s.mode === "events";
    const uses = modeOf(s);
    if (events && !s.event) {
      empty(view, "Type an event name to see where it happens.");
      return;
    }
    const cellSize = Number(s.cell);
    // The controls offer only the API's values (readState keeps no other).
    const query = {
      mapId: map.mapId,
      cellSize: s.cell as "5" | "10" | "25" | "50",
      days: s.days as "1" | "7" | "14" | "30",
      buildId: s.build,
      platform: s.platform,
    };
    // The bulk answer has no tail fields (cheaper for every cell); the tooltip asks heatmap/cell for the
    // one under the pointer, once per cell while this drawing stands.
    const asked = new Map<string, Promise<CellTails>>();
    const tailsOf = (c: Cell) => {
      const key = `${c.x}:${c.y}`;
      let answer = asked.get(key);
      if (!answer) {
        answer = dataOf(
          api.GET("/v1/projects/{id}/heatmap/cell", {
            params: { path: { id: projectId }, query: { ...query, x: String(c.x), y: String(c.y) } },
          }),
        ).then((d) => d.distributions);
        // A failed answer is not kept: the next visit to the cell asks again.
        answer.catch(() => asked.delete(key));
        asked.set(key, answer);
      }
      return answer;
    };
    return withStates(
      view,
      () =>
        dataOf(
          api.GET("/v1/projects/{id}/heatmap", {
            params: {
              path: { id: projectId },
              query: {
                ...query,
                eventName: events ? s.event : undefined,
                why: uses.why ? "1" : undefined,
                hitches: uses.hitches ? "1" : undefined,
              },
            },
          }),
        ),
      async (cells) => {
        const metric = metricOf(s.metric ?? "fps");
        const profile = events ? undefined : profiles.find((p) => p.id === s.profile);
        const drawing: Drawing = { cells, cellSize, event: s.event ?? "", metric, profile, tailsOf };
        const painted = uses.paint(drawing);
        const total = cells.reduce((n, c) => n + c.event_count, 0);
        view.append(
          h(
            "p",
            { class: "summary", role: "status" },
            `${fmt(cells.length)} cells, ${fmt(total)} events on ${map.name}.`,
          ),
          legend(painted.legend),
        );
        if (painted.note) {
          view.append(h("p", { class: "muted note" }, painted.note));
        }
        await drawMap(view, {
          id: "heatmap-canvas",
          map,
          cellSize,
          cells: painted.cells,
          label: uses.title(drawing, map.name),
          onSelect: events ? undefined : (cell) => openCell(s, map, cell),
        });
        const selected = cellFromUrl();
        if (!events && selected) {
          openCell(s, map, selected);
        }
      },
      {
        isEmpty: (cells) => cells.length === 0,
        emptyMessage: events
          ? `No ${s.event} events with a position on this map in this period.`
          : "No performance samples with a position on this map for these filters.",
      },
    );
  }
  await draw(form.state);
}

async function loadLists(body: HTMLElement, projectId: string) {
  let result: { maps: MapRecord[]; profiles: Profile[]; builds: string[] } | null = null;
  await withStates(
    body,
    async () => {
      const [maps, profiles, builds] = await Promise.all([
        dataOf(api.GET("/v1/projects/{id}/maps", { params: { path: { id: projectId } } })),
        dataOf(api.GET("/v1/projects/{id}/threshold-profiles", { params: { path: { id: projectId } } })),
        dataOf(
          api.GET("/v1/projects/{id}/builds", { params: { path: { id: projectId }, query: { days: "90" } } }),
        ),
      ]);
      return { maps, profiles, builds: builds.map((b) => b.build_id) };
    },
    (lists) => {
      result = lists;
    },
  );
  return result as { maps: MapRecord[]; profiles: Profile[]; builds: string[] } | null;
}

/** What a mode paints from: the heatmap's answer and the controls it reads. */
type Drawing = {
  cells: Cell[];
  cellSize: number;
  event: string;
  metric: Metric;
  profile: Profile | undefined;
  tailsOf: (c: Cell) => Promise<CellTails>;
};

type Mode = {
  /** The controls it reads, and what it asks of the heatmap (why=1, hitches=1). */
  metric: boolean;
  profile: boolean;
  why: boolean;
  hitches: boolean;
  paint(d: Drawing): Painted;
  /** The map's accessible name. */
  title(d: Drawing, mapName: string): string;
};

const judgedBy = (d: Drawing) => (d.profile ? `, judged by ${d.profile.name}` : "");

/** One row per mode of the Mode control. */
const MODES: Record<"performance" | "budget" | "bound" | "hitches" | "events", Mode> = {
  performance: {
    metric: true,
    profile: true,
    why: false,
    hitches: false,
    paint: (d) => perfCells(d.cells, d.cellSize, d.metric, d.profile, d.tailsOf),
    title: (d, map) => `${d.metric.label} per cell on ${map}${judgedBy(d)}`,
  },
  // Judged by the profile's budget shares, not by a metric.
  budget: {
    metric: false,
    profile: true,
    why: true,
    hitches: false,
    paint: (d) => budgetCells(d.cells, d.cellSize, d.profile),
    title: (d, map) => `Heartbeats within their display's budget per cell on ${map}${judgedBy(d)}`,
  },
  bound: {
    metric: false,
    profile: false,
    why: true,
    hitches: false,
    paint: (d) => boundCells(d.cells, d.cellSize),
    title: (_, map) => `What bounds the slow frames per cell on ${map}`,
  },
  hitches: {
    metric: false,
    profile: false,
    why: false,
    hitches: true,
    paint: (d) => hitchPaint(d.cells, d.cellSize),
    title: (_, map) => `Hitches per cell on ${map}`,
  },
  events: {
    metric: false,
    profile: false,
    why: false,
    hitches: false,
    paint: (d) => eventCells(d.cells, d.cellSize, d.event),
    title: (d, map) => `Where ${d.event} happens on ${map}`,
  },
};

const modeOf = (s: State): Mode =>
  MODES[(s.mode ?? "performance") as keyof typeof MODES] ?? MODES.performance;

type Painted = { cells: DrawnCell[]; legend: { fill: string; label: string }[]; note?: string };

function area(c: Cell, size: number): string {
  return `Cell x ${fmt(c.x)}…${fmt(c.x + size)}, y ${fmt(c.y)}…${fmt(c.y + size)}`;
}

/**
 * The tooltip of a cell: its means, and each metric's tail from heatmap/cell (`tails`): "…" while it is
 * being asked, "unavailable" when the request failed.
 */
function perfLines(c: Cell, size: number, tails?: CellTails | null): string[] {
  return [
    area(c, size),
    `Events: ${fmt(c.event_count)}`,
    ...METRICS.map((m) => {
      const v = m.value(c);
      if (v === null) {
        return `${m.label}: no sample`;
      }
      const tail = tails === undefined ? "…" : tails === null ? "unavailable" : fmt(m.tail.of(tails), m.unit);
      return `${m.label}: ${fmt(v, m.unit)} mean, ${m.tail.label} ${tail}`;
    }),
  ];
}

/** The cell's lines with its tails once heatmap/cell answers (`extra` follows them). */
const withTails = (c: Cell, size: number, tailsOf: (c: Cell) => Promise<CellTails>, extra: string[]) => () =>
  tailsOf(c).then(
    (t) => ({ lines: [...perfLines(c, size, t), ...extra], final: true }),
    () => ({ lines: [...perfLines(c, size, null), ...extra], final: false }),
  );

/**
 * Colours by the profile's thresholds when it defines the metric's, else a continuous scale. The
 * profile judges the cell's mean (as the alert evaluation does), so no tail is needed to colour it.
 */
export function perfCells(
  cells: Cell[],
  size: number,
  m: Metric,
  profile: Profile | undefined,
  tailsOf: (c: Cell) => Promise<CellTails>,
): Painted {
  const judged = profile !== undefined && (m.good(profile) !== null || m.warn(profile) !== null);
  if (profile && judged) {
    const drawn = cells.map((c) => {
      const v = m.value(c);
      const verdict = v === null ? null : judge(m, profile, v);
      const cls = verdict ?? "none";
      const extra = [verdict ? `${profile.name}: ${verdict}` : `${profile.name}: no sample`];
      return {
        x: c.x,
        y: c.y,
        value: v,
        cls,
        fill: verdict ? JUDGEMENT_FILL[verdict] : NO_SAMPLE_FILL,
        lines: [...perfLines(c, size), ...extra],
        more: withTails(c, size, tailsOf, extra),
      };
    });
    const good = m.good(profile);
    const warn = m.warn(profile);
    const cmp = m.higherIsBetter ? "≥" : "≤";
    return {
      cells: drawn,
      legend: [
        ...(good !== null ? [{ fill: JUDGEMENT_FILL.good, label: `Good: ${cmp} ${fmt(good, m.unit)}` }] : []),
        ...(warn !== null && good !== null
          ? [{ fill: JUDGEMENT_FILL.warn, label: `Warn: ${cmp} ${fmt(warn, m.unit)}` }]
          : warn !== null
            ? [{ fill: JUDGEMENT_FILL.good, label: `Passes warn: ${cmp} ${fmt(warn, m.unit)}` }]
            : []),
        { fill: JUDGEMENT_FILL.bad, label: "Bad: worse" },
        { fill: NO_SAMPLE_FILL, label: "No sample" },
      ],
    };
  }
  const values = cells.map((c) => m.value(c)).filter((v): v is number => v !== null);
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  const drawn = cells.map((c) => {
    const v = m.value(c);
    const more = withTails(c, size, tailsOf, []);
    if (v === null) {
      return {
        x: c.x,
        y: c.y,
        value: null,
        cls: "none",
        fill: NO_SAMPLE_FILL,
        lines: perfLines(c, size),
        more,
      };
    }
    const t = hi > lo ? (v - lo) / (hi - lo) : 0;
    const worst = m.higherIsBetter ? 1 - t : t;
    return {
      x: c.x,
      y: c.y,
      value: v,
      cls: "scale",
      fill: rampColour(worst),
      lines: perfLines(c, size),
      more,
    };
  });
  const best = m.higherIsBetter ? hi : lo;
  const worst = m.higherIsBetter ? lo : hi;
  return {
    cells: drawn,
    note: profile
      ? `${profile.name} defines no ${m.label.toLowerCase()} threshold: shown on a continuous scale.`
      : undefined,
    legend: values.length
      ? [
          { fill: rampColour(0), label: `Best: ${fmt(best, m.unit)}` },
          { fill: rampColour(0.5), label: "" },
          { fill: rampColour(1), label: `Worst: ${fmt(worst, m.unit)}` },
          { fill: NO_SAMPLE_FILL, label: "No sample" },
        ]
      : [{ fill: NO_SAMPLE_FILL, label: `No ${m.label.toLowerCase()} sample in these cells` }],
  };
}

/** Events mode: intensity by the cell's count of the event, relative to the busiest cell. */
function eventCells(cells: Cell[], size: number, name: string): Painted {
  const max = Math.max(1, ...cells.map((c) => c.event_count));
  return {
    cells: cells.map((c) => ({
      x: c.x,
      y: c.y,
      value: c.event_count,
      cls: "count",
      fill: rampColour(c.event_count / max),
      lines: [area(c, size), `${name}: ${fmt(c.event_count)}`],
    })),
    legend: [
      { fill: rampColour(1 / max), label: "1" },
      { fill: rampColour(1), label: `${fmt(max)} (busiest cell)` },
    ],
  };
}
