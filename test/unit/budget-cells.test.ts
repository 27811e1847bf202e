import { describe, expect, it } from "vitest";
import type { components } from "../../workers/api/web/client/api.gen.js";
import { budgetCells, judgeBudget, withinBudget } from "../../workers/api/web/client/budget-cells.js";
import { NO_SAMPLE_FILL } from "../../workers/api/web/client/diff-colours.js";
import { JUDGEMENT_FILL, rampColour } from "../../workers/api/web/client/fills.js";
import { heatmapCell } from "../support/heatmap-cell.js";

// The heatmap's "frame budget" mode (workers/api/web/client/budget-cells.ts): each cell's share of
// heartbeats within one refresh of their display, judged by a profile's budget shares.

type Cell = components["schemas"]["HeatmapCell"];
type Profile = components["schemas"]["ThresholdProfile"];

const zero = { gpu: 0, game_thread: 0, render_thread: 0, io: 0, memory: 0, unknown: 0 };
const cell = (x: number, heartbeats: number, slow: number): Cell =>
  heatmapCell(x, heartbeats, { heartbeats, slow, bounds: { ...zero, unknown: slow } });

const profile = (good: number | null, warn: number | null): Profile => ({
  id: "00000000-0000-4000-8000-000000000001",
  name: "Phones",
  platform: null,
  resolution: null,
  buildConfig: null,
  gpu: null,
  storage: null,
  fpsGood: 60,
  fpsWarn: 30,
  frameTimeGood: null,
  frameTimeWarn: null,
  memoryGood: null,
  memoryWarn: null,
  gpuTimeGood: null,
  gpuTimeWarn: null,
  budgetShareGood: good,
  budgetShareWarn: warn,
  createdAt: "2026-12-01T00:00:00.000Z",
  updatedAt: "2026-12-01T00:00:00.000Z",
});

describe("budget cells", () => {
  it("the share within budget: heartbeats not slow over heartbeats; none without a heartbeat", () => {
    expect(withinBudget(cell(0, 20, 2))).toBe(0.9);
    expect(withinBudget(cell(0, 0, 0))).toBeNull();
  });

  it("judges by the profile's shares: at the mark passes, a lone mark has no middle band", () => {
    const p = profile(0.9, 0.75);
    expect([0.95, 0.9, 0.8, 0.75, 0.5].map((s) => judgeBudget(p, s))).toEqual([
      "good",
      "good",
      "warn",
      "warn",
      "bad",
    ]);
    expect(judgeBudget(profile(null, 0.75), 0.8)).toBe("good");
    expect(judgeBudget(profile(0.9, null), 0.8)).toBe("bad");
    expect(judgeBudget(profile(null, null), 0.8)).toBeNull();
  });

  it("colours by the verdict with a profile, by the ramp without, and says no sample without a heartbeat", () => {
    const cells = [cell(0, 20, 1), cell(25, 20, 4), cell(50, 20, 10), cell(75, 0, 0)];
    const judged = budgetCells(cells, 25, profile(0.9, 0.75));
    expect(judged.cells.map((c) => [c.cls, c.fill, c.value])).toEqual([
      ["good", JUDGEMENT_FILL.good, 0.95],
      ["warn", JUDGEMENT_FILL.warn, 0.8],
      ["bad", JUDGEMENT_FILL.bad, 0.5],
      ["none", NO_SAMPLE_FILL, null],
    ]);
    expect(judged.cells[1]?.lines).toEqual([
      "Cell x 25…50, y 0…25",
      "Within budget: 16 of 20 heartbeats (80 %)",
      "Phones: warn",
    ]);
    expect(judged.legend.map((l) => l.label)).toEqual([
      "Good: ≥ 90 % within budget",
      "Warn: ≥ 75 % within budget",
      "Bad: fewer",
      "No frame time",
    ]);
    // A profile with only the per-metric marks: the continuous scale, and the page says why.
    const scaled = budgetCells(cells, 25, profile(null, null));
    expect(scaled.cells.map((c) => [c.cls, c.fill])).toEqual([
      ["scale", rampColour(1 - 0.95)],
      ["scale", rampColour(1 - 0.8)],
      ["scale", rampColour(0.5)],
      ["none", NO_SAMPLE_FILL],
    ]);
    expect(scaled.note).toContain("Phones defines no budget share");
    expect(budgetCells(cells, 25, undefined).note).not.toContain("defines no");
  });
});
