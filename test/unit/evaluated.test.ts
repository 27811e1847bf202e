import { describe, expect, it } from "vitest";
import { ago, evaluatedLabel } from "../../workers/api/web/client/evaluated.js";

describe("the alerts page's evaluated label", () => {
  const now = Date.UTC(2026, 10, 26, 12, 0, 0);
  const at = (minutes: number) => new Date(now - minutes * 60_000).toISOString();

  it("says how long ago, rounded down", () => {
    expect([0.5, 3, 59, 61, 47 * 60, 72 * 60].map((m) => ago(m * 60_000))).toEqual([
      "just now",
      "3 min ago",
      "59 min ago",
      "1 h ago",
      "47 h ago",
      "3 d ago",
    ]);
  });

  it("flags an active rule not evaluated for more than two intervals, and a failed evaluation", () => {
    const rule = (minutes: number | null, lastResult = "resolved", isActive = true) => ({
      isActive,
      lastResult,
      lastEvaluatedAt: minutes === null ? null : at(minutes),
    });
    expect(evaluatedLabel(rule(3), now)).toEqual({ text: "evaluated 3 min ago", flag: null });
    expect(evaluatedLabel(rule(10), now)).toEqual({ text: "evaluated 10 min ago", flag: null });
    expect(evaluatedLabel(rule(11), now)).toEqual({
      text: "evaluated 11 min ago, behind schedule",
      flag: "late",
    });
    expect(evaluatedLabel(rule(11, "resolved", false), now)).toEqual({
      text: "evaluated 11 min ago",
      flag: null,
    });
    expect(evaluatedLabel(rule(2, "error"), now)).toEqual({
      text: "evaluated 2 min ago, failed",
      flag: "failed",
    });
    expect(evaluatedLabel(rule(null), now)).toEqual({ text: "not evaluated yet", flag: null });
    expect(evaluatedLabel(rule(null, "resolved", false), now)).toEqual({ text: "—", flag: null });
  });
});
