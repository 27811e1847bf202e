// The map's fills that several modes share: a profile's judged levels and the continuous ramp. Pure,
// so the mode painters that use them (budget-cells.ts) are unit tested without a DOM.

export type Judgement = "good" | "warn" | "bad";

export const JUDGEMENT_FILL: Record<Judgement, string> = {
  good: "#1f9d55",
  warn: "#f2b01e",
  bad: "#d7263d",
};

/**
 * good: passes the good mark; warn: fails good but passes warn; bad: fails every mark given. Passing is
 * at or above a mark when higher is better, at or below otherwise (equal passes). A lone mark has no
 * middle band. Null without either mark.
 */
export function judgeMarks(
  value: number,
  good: number | null,
  warn: number | null,
  higherIsBetter: boolean,
): Judgement | null {
  const passes = (mark: number) => (higherIsBetter ? value >= mark : value <= mark);
  if (good === null && warn === null) {
    return null;
  }
  if (good !== null && passes(good)) {
    return "good";
  }
  if (warn !== null && passes(warn)) {
    return good === null ? "good" : "warn";
  }
  return "bad";
}

/** Continuous scale from green (best) through yellow to red (worst), t in [0, 1] with 1 worst. */
export function rampColour(t: number): string {
  const u = Math.min(1, Math.max(0, t));
  const hue = 120 - 120 * u;
  return `hsl(${hue.toFixed(0)} 75% 45%)`;
}
