import type { components } from "./api.gen.js";
import { NO_SAMPLE_FILL } from "./diff-colours.js";
import { JUDGEMENT_FILL, type Judgement, judgeMarks, rampColour } from "./fills.js";
import { fmt } from "./format.js";

// The heatmap's "frame budget" mode: the share of each cell's heartbeats within one refresh of their
// display (1000 / display.hz, 60 Hz where the SDK does not send the rate), from the heatmap's why=1
// fields, judged by a threshold profile's budget shares or drawn on a continuous scale. A 120 Hz phone's
// 12 ms frame is over its budget and a 60 Hz TV's is not: each device is judged by its own display.
// Pure: test/unit/budget-cells.test.ts holds it.

type Cell = components["schemas"]["HeatmapCell"];
type Profile = components["schemas"]["ThresholdProfile"];

type Painted = {
  cells: Array<{ x: number; y: number; value: number | null; cls: string; fill: string; lines: string[] }>;
  legend: { fill: string; label: string }[];
  note?: string;
};

/** The share of a cell's heartbeats within their display's budget; null without a heartbeat. */
export function withinBudget(c: Cell): number | null {
  const beats = c.heartbeats ?? 0;
  return beats > 0 ? (beats - (c.slow ?? 0)) / beats : null;
}

/**
 * good: at least the profile's good share; warn: under it but at least the warn share; bad: under every
 * share the profile defines (a profile with only one has no middle band). Null when it defines neither.
 */
export function judgeBudget(p: Profile, share: number): Judgement | null {
  return judgeMarks(share, p.budgetShareGood, p.budgetShareWarn, true);
}

const pct = (share: number) => `${fmt(Math.round(share * 1000) / 10)} %`;

/**
 * "Frame budget" mode: each cell by its share of heartbeats within budget, judged by the profile's
 * budget shares when it has them, else on a continuous scale from all within (best) to none (worst).
 */
export function budgetCells(cells: Cell[], size: number, profile: Profile | undefined): Painted {
  const judged =
    profile !== undefined && (profile.budgetShareGood !== null || profile.budgetShareWarn !== null);
  const drawn = cells.map((c): Painted["cells"][number] => {
    const beats = c.heartbeats ?? 0;
    const share = withinBudget(c);
    const verdict = share !== null && judged && profile ? judgeBudget(profile, share) : null;
    const lines = [
      `Cell x ${fmt(c.x)}…${fmt(c.x + size)}, y ${fmt(c.y)}…${fmt(c.y + size)}`,
      share === null
        ? "No heartbeat with a frame time"
        : `Within budget: ${fmt(beats - (c.slow ?? 0))} of ${fmt(beats)} heartbeats (${pct(share)})`,
      ...(judged && profile ? [`${profile.name}: ${verdict ?? "no sample"}`] : []),
    ];
    const fill = share === null ? NO_SAMPLE_FILL : verdict ? JUDGEMENT_FILL[verdict] : rampColour(1 - share);
    return {
      x: c.x,
      y: c.y,
      value: share,
      cls: share === null ? "none" : (verdict ?? "scale"),
      fill,
      lines,
    };
  });
  const budget = "one refresh of their display (60 Hz where the SDK does not send the rate)";
  if (judged && profile) {
    const good = profile.budgetShareGood;
    const warn = profile.budgetShareWarn;
    return {
      cells: drawn,
      legend: [
        ...(good !== null
          ? [{ fill: JUDGEMENT_FILL.good, label: `Good: ≥ ${pct(good)} within budget` }]
          : []),
        ...(warn !== null && good !== null
          ? [{ fill: JUDGEMENT_FILL.warn, label: `Warn: ≥ ${pct(warn)} within budget` }]
          : warn !== null
            ? [{ fill: JUDGEMENT_FILL.good, label: `Passes warn: ≥ ${pct(warn)} within budget` }]
            : []),
        { fill: JUDGEMENT_FILL.bad, label: "Bad: fewer" },
        { fill: NO_SAMPLE_FILL, label: "No frame time" },
      ],
      note: `Within budget: a heartbeat no longer than ${budget}.`,
    };
  }
  return {
    cells: drawn,
    legend: [
      { fill: rampColour(0), label: "All within budget" },
      { fill: rampColour(0.5), label: "Half" },
      { fill: rampColour(1), label: "None within budget" },
      { fill: NO_SAMPLE_FILL, label: "No frame time" },
    ],
    note: `Within budget: a heartbeat no longer than ${budget}.${
      profile ? ` ${profile.name} defines no budget share: shown on a continuous scale.` : ""
    }`,
  };
}
