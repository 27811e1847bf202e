// "evaluated 3 min ago" on the alerts page: when a rule was last evaluated, and whether that is late.
// DOM-free, so a unit test reads it (test/unit/evaluated.test.ts).

/** The cron's interval (every 5 minutes, wrangler.toml): a rule evaluated longer ago than two of them is behind. */
export const EVALUATION_INTERVAL_MS = 5 * 60_000;

export type Evaluated = {
  text: string;
  /** "late": not evaluated for more than two intervals; "failed": the last evaluation failed. */
  flag: "late" | "failed" | null;
};

/** Minutes, hours or days ago, rounded down; "just now" under a minute. */
export function ago(ms: number): string {
  const min = Math.floor(Math.max(0, ms) / 60_000);
  if (min < 1) {
    return "just now";
  }
  if (min < 60) {
    return `${min} min ago`;
  }
  const hours = Math.floor(min / 60);
  return hours < 48 ? `${hours} h ago` : `${Math.floor(hours / 24)} d ago`;
}

/** The rule's evaluation cell: an inactive rule is not evaluated and never late. */
export function evaluatedLabel(
  rule: { isActive: boolean; lastEvaluatedAt: string | null; lastResult: string | null },
  nowMs: number,
): Evaluated {
  if (!rule.lastEvaluatedAt) {
    return { text: rule.isActive ? "not evaluated yet" : "—", flag: null };
  }
  const age = nowMs - Date.parse(rule.lastEvaluatedAt);
  const text = `evaluated ${ago(age)}`;
  if (rule.lastResult === "error") {
    return { text: `${text}, failed`, flag: "failed" };
  }
  if (rule.isActive && age > 2 * EVALUATION_INTERVAL_MS) {
    return { text: `${text}, behind schedule`, flag: "late" };
  }
  return { text, flag: null };
}
