import { describe, expect, it } from "vitest";
import type { components } from "../../workers/api/web/client/api.gen.js";
import { heatmapCell } from "../support/heatmap-cell.js";

type Cell = components["schemas"]["HeatmapCell"];

import { BOUND_FILL, boundCells, NO_SLOW_FILL } from "../../workers/api/web/client/bound-cells.js";
import { NO_SAMPLE_FILL } from "../../workers/api/web/client/diff-colours.js";

// The heatmap's "bound by" mode (workers/api/web/client/pages/heatmap.ts boundCells): each cell in the
// colour of its slow frames' most common bound, pale without a slow frame, "no sample" without a frame.

const zero = { gpu: 0, game_thread: 0, render_thread: 0, io: 0, memory: 0, unknown: 0 };
const cell = (x: number, heartbeats: number, bounds: Partial<typeof zero>): Cell => {
  const b = { ...zero, ...bounds };
  return heatmapCell(x, heartbeats, {
    heartbeats,
    slow: Object.values(b).reduce((s, n) => s + n, 0),
    bounds: b,
  });
};

describe("boundCells", () => {
  it("colours each cell by its top bound, with the counts in the tooltip", () => {
    const painted = boundCells(
      [
        cell(0, 11, { gpu: 9, game_thread: 2 }),
        cell(25, 8, { io: 3, unknown: 3 }),
        cell(50, 7, {}),
        cell(75, 0, {}),
      ],
      25,
    );
    expect(painted.cells.map((c) => [c.x, c.cls, c.fill])).toEqual([
      [0, "gpu", BOUND_FILL.gpu],
      // A tie goes to the rule's order: IO before unknown.
      [25, "io", BOUND_FILL.io],
      [50, "no-slow", NO_SLOW_FILL],
      [75, "none", NO_SAMPLE_FILL],
    ]);
    expect(painted.cells[0]?.lines).toEqual([
      "Cell x 0…25, y 0…25",
      "Heartbeats: 11, slow 11 (100 %)",
      "GPU-bound: 9 (81.8 %)",
      "game-thread-bound: 2 (18.2 %)",
    ]);
    // The legend names only the bounds on the map, then the two plain swatches.
    expect(painted.legend.map((l) => l.fill)).toEqual([
      BOUND_FILL.gpu,
      BOUND_FILL.io,
      NO_SLOW_FILL,
      NO_SAMPLE_FILL,
    ]);
    expect(painted.legend[0]?.label).toBe("Most slow frames GPU-bound");
  });

  it("every bound has its own colour, none of them the plain swatches", () => {
    const fills = Object.values(BOUND_FILL);
    expect(new Set(fills).size).toBe(fills.length);
    expect(fills).not.toContain(NO_SLOW_FILL);
    expect(fills).not.toContain(NO_SAMPLE_FILL);
  });
});
