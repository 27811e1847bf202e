import type { components } from "./api.gen.js";
import { NO_SAMPLE_FILL } from "./diff-colours.js";
import { rampColour } from "./fills.js";
import { fmt } from "./format.js";

// The heatmap's "hitches" mode, from the heatmap's hitches=1 fields: each cell by the share of its
// heartbeats that were hitches (over twice their session's median frame time), and the cells whose
// hitches come on first entry (first visits hitch at least twice as often as later ones: the cell
// panel's "stutter on first entry", typically shader compilation or streaming) in a colour of their own.
// Pure: test/unit/hitch-paint.test.ts holds it.

type Cell = components["schemas"]["HeatmapCell"];

type Painted = {
  cells: Array<{ x: number; y: number; value: number | null; cls: string; fill: string; lines: string[] }>;
  legend: { fill: string; label: string }[];
  note?: string;
};

/** Okabe–Ito blue: a cell whose hitches come on first entry. */
export const FIRST_ENTRY_FILL = "#0072b2";

const pct = (part: number, whole: number) => (whole > 0 ? (part / whole) * 100 : null);
const shown = (v: number | null) => (v === null ? "—" : `${fmt(Math.round(v * 10) / 10)} %`);

/** A cell's hitch shares (%): all heartbeats, first visits, later visits; null where none was judged. */
export function hitchShares(c: Cell) {
  const judged = c.hitch_heartbeats ?? 0;
  const hitches = c.hitches ?? 0;
  const firstJudged = c.first_visit_heartbeats ?? 0;
  const firstHitches = c.first_visit_hitches ?? 0;
  return {
    all: pct(hitches, judged),
    first: pct(firstHitches, firstJudged),
    later: pct(hitches - firstHitches, judged - firstJudged),
  };
}

/** The cell panel's rule: first visits hitch, and at least twice as often as later ones. */
export function firstEntryStutter(s: ReturnType<typeof hitchShares>): boolean {
  return s.first !== null && s.first > 0 && (s.later === null || s.first >= 2 * s.later);
}

/**
 * "Hitches" mode: the continuous scale from no hitch to the busiest cell's share, first-entry cells in
 * FIRST_ENTRY_FILL, cells without a judged heartbeat as having no sample.
 */
export function hitchPaint(cells: Cell[], size: number): Painted {
  const shares = cells.map(hitchShares);
  const max = Math.max(0, ...shares.map((s) => s.all ?? 0));
  const drawn = cells.map((c, i): Painted["cells"][number] => {
    const s = shares[i] as ReturnType<typeof hitchShares>;
    const first = firstEntryStutter(s);
    const lines = [
      `Cell x ${fmt(c.x)}…${fmt(c.x + size)}, y ${fmt(c.y)}…${fmt(c.y + size)}`,
      s.all === null
        ? "Hitches: not judged (no frame time with a session median)"
        : `Hitches: ${fmt(c.hitches ?? 0)} of ${fmt(c.hitch_heartbeats ?? 0)} heartbeats (${shown(s.all)})`,
      ...(s.all === null ? [] : [`First visits ${shown(s.first)}, later ${shown(s.later)}`]),
      ...(first ? ["Stutter on first entry"] : []),
    ];
    return {
      x: c.x,
      y: c.y,
      value: s.all,
      cls: s.all === null ? "none" : first ? "first-entry" : "scale",
      fill:
        s.all === null ? NO_SAMPLE_FILL : first ? FIRST_ENTRY_FILL : rampColour(max > 0 ? s.all / max : 0),
      lines,
    };
  });
  return {
    cells: drawn,
    legend: [
      { fill: rampColour(0), label: "No hitch" },
      { fill: rampColour(1), label: `Most hitches: ${shown(max)} of heartbeats` },
      { fill: FIRST_ENTRY_FILL, label: "Stutter on first entry (first visits hitch ≥ 2× later ones)" },
      { fill: NO_SAMPLE_FILL, label: "Not judged" },
    ],
    note: "A hitch: a frame time over twice its session's median on this map. Click a cell for its full why.",
  };
}
