import type { components } from "./api.gen.js";
import { NO_SAMPLE_FILL } from "./diff-colours.js";
import { fmt } from "./format.js";
import { BOUND_LABELS } from "./why.js";

// The heatmap's "bound by" mode: what bounds each cell's slow frames, from the heatmap's why=1 fields.
// Pure: test/unit/bound-cells.test.ts holds it.

type Cell = components["schemas"]["HeatmapCell"];
type Bound = keyof typeof BOUND_LABELS;
/** The bounds in the rule's order (frame-causes.ts BOUNDS). */
const BOUND_ORDER = Object.keys(BOUND_LABELS) as Bound[];

/** What the map draws: the map canvas's cells, the legend, a note under it. */
type Painted = {
  cells: Array<{ x: number; y: number; value: number | null; cls: string; fill: string; lines: string[] }>;
  legend: { fill: string; label: string }[];
  note?: string;
};

/** The bound colours: Okabe–Ito's, which a colour-blind person tells apart; unknown in grey. */
export const BOUND_FILL: Record<Bound, string> = {
  gpu: "#d55e00",
  game_thread: "#e69f00",
  render_thread: "#cc79a7",
  io: "#0072b2",
  memory: "#009e73",
  unknown: "#7f7f7f",
};
/** A cell whose heartbeats were all within their display's budget. */
export const NO_SLOW_FILL = "#e4e4e4";

/**
 * "Bound by" mode: each cell in the colour of the bound of most of its slow heartbeats (longer than one
 * refresh of their display; ties in the rule's order), cells without a slow one pale, cells without a
 * heartbeat as having no sample. The tooltip gives the slow share and every bound's count.
 */
export function boundCells(cells: Cell[], size: number): Painted {
  const drawn = cells.map((c): Painted["cells"][number] => {
    const beats = c.heartbeats ?? 0;
    const slow = c.slow ?? 0;
    const bounds = c.bounds;
    const top =
      slow > 0 && bounds
        ? BOUND_ORDER.reduce<Bound>((best, b) => (bounds[b] > bounds[best] ? b : best), "gpu")
        : null;
    const lines = [
      `Cell x ${fmt(c.x)}…${fmt(c.x + size)}, y ${fmt(c.y)}…${fmt(c.y + size)}`,
      `Heartbeats: ${fmt(beats)}, slow ${fmt(slow)}${beats ? ` (${fmt(Math.round((slow / beats) * 1000) / 10)} %)` : ""}`,
      ...(slow > 0 && bounds
        ? BOUND_ORDER.filter((b) => bounds[b] > 0).map(
            (b) =>
              `${BOUND_LABELS[b]}: ${fmt(bounds[b])} (${fmt(Math.round((bounds[b] / slow) * 1000) / 10)} %)`,
          )
        : []),
    ];
    return {
      x: c.x,
      y: c.y,
      value: slow,
      cls: top ?? (beats ? "no-slow" : "none"),
      fill: top ? BOUND_FILL[top] : beats ? NO_SLOW_FILL : NO_SAMPLE_FILL,
      lines,
    };
  });
  const shown = BOUND_ORDER.filter((b) => drawn.some((d) => d.cls === b));
  return {
    cells: drawn,
    legend: [
      ...shown.map((b) => ({ fill: BOUND_FILL[b], label: `Most slow frames ${BOUND_LABELS[b]}` })),
      { fill: NO_SLOW_FILL, label: "No slow frame (all within the display's budget)" },
      { fill: NO_SAMPLE_FILL, label: "No frame time" },
    ],
    note: "Slow: a heartbeat longer than one refresh of its display (60 Hz where the SDK does not send the rate). Click a cell for its full why.",
  };
}
