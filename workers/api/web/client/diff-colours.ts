// The difference map's colours: red for a cell where the candidate is worse, green where it is better,
// darker as the change grows relative to the largest one, and a neutral grey for an unchanged cell. The
// smallest change keeps its hue at full strength, so a cell slightly worse never looks like an unchanged
// one (test/unit/diff-colours.test.ts measures the distance at every magnitude).

/** An unchanged cell: no hue. */
export const UNCHANGED_FILL = "hsl(0 0% 80%)";

/** Red for worse, green for better; `t` is the change over the largest change (0…1). */
export function diffFill(t: number, worse: boolean): string {
  const u = Math.min(1, Math.max(0, t));
  const light = 74 - 36 * u;
  return worse ? `hsl(0 80% ${light.toFixed(0)}%)` : `hsl(140 65% ${light.toFixed(0)}%)`;
}

/** A cell without a sample of what is drawn (every map of the dashboard). */
export const NO_SAMPLE_FILL = "#8a8f98";
