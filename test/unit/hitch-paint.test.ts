import { describe, expect, it } from "vitest";
import type { components } from "../../workers/api/web/client/api.gen.js";
import { NO_SAMPLE_FILL } from "../../workers/api/web/client/diff-colours.js";
import { rampColour } from "../../workers/api/web/client/fills.js";
import { FIRST_ENTRY_FILL, hitchPaint, hitchShares } from "../../workers/api/web/client/hitch-paint.js";
import { heatmapCell } from "../support/heatmap-cell.js";

// The heatmap's "hitches" mode (workers/api/web/client/hitch-paint.ts): each cell by its hitch share,
// the cells whose hitches come on first entry in their own colour.

type Cell = components["schemas"]["HeatmapCell"];

const cell = (x: number, judged: number, hitches: number, firstJudged: number, firstHitches: number): Cell =>
  heatmapCell(x, judged, {
    hitch_heartbeats: judged,
    hitches,
    first_visit_heartbeats: firstJudged,
    first_visit_hitches: firstHitches,
  });

describe("hitch paint", () => {
  it("shares: all, first visits, later visits", () => {
    expect(hitchShares(cell(0, 15, 3, 3, 3))).toEqual({ all: 20, first: 100, later: 0 });
    expect(hitchShares(cell(0, 0, 0, 0, 0))).toEqual({ all: null, first: null, later: null });
  });

  it("the cave's first-entry stutter stands out; the rest on the scale to the busiest share", () => {
    const painted = hitchPaint(
      [cell(0, 15, 3, 3, 3), cell(25, 20, 4, 4, 1), cell(50, 10, 0, 2, 0), cell(75, 0, 0, 0, 0)],
      25,
    );
    expect(painted.cells.map((c) => [c.cls, c.fill, c.value])).toEqual([
      ["first-entry", FIRST_ENTRY_FILL, 20],
      // First visits 25 %, later 3 of 16 (18.75 %): not twice as often.
      ["scale", rampColour(1), 20],
      ["scale", rampColour(0), 0],
      ["none", NO_SAMPLE_FILL, null],
    ]);
    expect(painted.cells[0]?.lines.slice(1)).toEqual([
      "Hitches: 3 of 15 heartbeats (20 %)",
      "First visits 100 %, later 0 %",
      "Stutter on first entry",
    ]);
    expect(painted.cells[1]?.lines.slice(2)).toEqual(["First visits 25 %, later 18.8 %"]);
    expect(painted.legend.map((l) => l.label)).toContain("Most hitches: 20 % of heartbeats");
  });
});
