// The map's fills that several modes share: a profile's judged levels and the continuous ramp. Pure,
// so the mode painters that use them (budget-cells.ts) are unit tested without a DOM.

export type Judgement = "good" | "warn" | "bad";

export const JUDGEMENT_FILL: Record<Judgement, string> = {
  good: "#1f9d55",
  warn: "#f2b01e",
  bad: "#d7263d",
};

/** Continuous scale from green (best) through yellow to red (worst), t in [0, 1] with 1 worst. */
export function rampColour(t: number): string {
  const u = Math.min(1, Math.max(0, t));
  const hue = 120 - 120 * u;
  return `hsl(${hue.toFixed(0)} 75% 45%)`;
}
