import { describe, expect, it } from "vitest";
import { regressionText } from "../../workers/api/alerts/notification.js";
import type { RegressionNotification } from "../../workers/api/analytics/verdicts.js";

// A build regression's Slack line states each metric's change in its own unit: percent of the baseline
// for the medians, percentage points for the share of poor sessions.

const group = (diffPct: number, ci95: [number, number]): RegressionNotification["overall"] => ({
  key: null,
  baseline: { sessions: 40, median: 0.1 },
  candidate: { sessions: 42, median: 0.35 },
  diffPct,
  ci95,
  verdict: "regressed",
});

const notification = (metric: RegressionNotification["metric"], g: RegressionNotification["overall"]) =>
  ({
    type: "build.regressed",
    eventId: "e",
    createdAt: "2026-12-03T00:00:00.000Z",
    projectId: "p",
    build: { id: "1.1", baseline: "1.0", baselinePinned: false },
    metric,
    overall: g,
    groups: { platform: [], gpu: [] },
    links: { compare: "", builds: "" },
  }) satisfies RegressionNotification;

describe("regressionText", () => {
  it("poor sessions in points, medians in percent", () => {
    expect(regressionText(notification("poor_session_share", group(25, [9.5, 39.25])))).toBe(
      "Build 1.1 regressed its share of poor sessions against 1.0: +25 pts (95 % CI +9.5 pts to +39.25 pts), 42 sessions vs 40.",
    );
    expect(regressionText(notification("frame_time", group(12, [4, 20])))).toMatch(
      /: \+12 % \(95 % CI \+4 % to \+20 %\)/,
    );
  });
});
