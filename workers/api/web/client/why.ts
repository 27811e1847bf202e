import type { components } from "./api.gen.js";

type Schemas = components["schemas"];

// The cell panel's "Why" sentences from the drill-down's `why` and its GPU groups: what bounds most of
// the cell's slow frames, on which GPU most of those are, and whether the hitches come from first entry.
// Pure: test/unit/cell-why-text.test.ts holds it.

type Why = Schemas["CellWhy"];
type Group = Schemas["CellBreakdownGroup"];
type Bound = Why["bounds"][number]["bound"];

export const BOUND_LABELS: Record<Bound, string> = {
  gpu: "GPU-bound",
  game_thread: "game-thread-bound",
  render_thread: "render-thread-bound",
  io: "stalled on disk reads",
  memory: "under memory pressure",
  unknown: "not explained by the fields collected",
};

const percent = (n: number) => `${Math.round(n)} %`;

/** What counts as slow, as a phrase. */
function basisText(why: Why): string {
  switch (why.basis) {
    case "frame_time":
      return `frame time over ${why.threshold} ms`;
    case "fps":
      return `under ${why.threshold} fps`;
    case "budget":
      return "over one refresh of each display, no profile mark chosen";
    default:
      return "every heartbeat, no profile chosen";
  }
}

/**
 * "Why: 75 % of slow frames GPU-bound, most on RTX 3060 (6 of its 6)." The top bound is the one with
 * the most slow heartbeats (ties: the rule's order); the GPU named is the group with the most slow
 * heartbeats of that bound, when the samples sent one.
 */
export function whyText(why: Why, gpus: readonly Group[]): string {
  if (why.slow === 0) {
    return `Why: no slow frames here (${basisText(why)}).`;
  }
  const top = why.bounds.reduce((best, b) => (b.slow > best.slow ? b : best));
  const frames = why.basis === "all" ? "frames" : "slow frames";
  const head = `Why: ${percent(top.pct ?? 0)} of ${frames} ${BOUND_LABELS[top.bound]}`;
  const gpu = gpus
    .filter((g) => g.key !== null && g.bounds[top.bound] > 0)
    .reduce<Group | null>(
      (best, g) => (best === null || g.bounds[top.bound] > best.bounds[top.bound] ? g : best),
      null,
    );
  const on = gpu ? `, most on ${gpu.key} (${gpu.bounds[top.bound]} of its ${gpu.slow})` : "";
  return `${head}${on}; ${basisText(why)}.`;
}

/**
 * "Hitches: 1.2 per minute played (20 % of heartbeats); first visits 100 %, later 0 %: stutter on first
 * entry." The last clause when first visits hitch at least twice as often as later ones.
 */
export function hitchText(why: Why): string {
  const h = why.hitches;
  if (h.judged === 0) {
    return "Hitches: not judged (no frame times with a session median here).";
  }
  const rate = h.perMinute === null ? "" : `${h.perMinute} per minute played, `;
  const first = h.firstVisit.pct;
  const later = h.laterVisits.pct;
  const visits =
    first === null || later === null ? "" : `; first visits ${percent(first)}, later ${percent(later)}`;
  const entry =
    first !== null && first > 0 && (later === null || first >= 2 * later) ? ": stutter on first entry" : "";
  return `Hitches: ${rate}${percent(h.pct ?? 0)} of heartbeats${visits}${entry}.`;
}

/** A group's slow frames by their most common bound: "GPU-bound 75 %", or "—" without slow frames. */
export function groupBoundText(g: Pick<Group, "slow" | "bounds">): string {
  if (g.slow === 0) {
    return "—";
  }
  const [bound, n] = (Object.entries(g.bounds) as Array<[Bound, number]>).reduce((best, e) =>
    e[1] > best[1] ? e : best,
  );
  return `${BOUND_LABELS[bound]} ${percent((n / g.slow) * 100)}`;
}

type Verdicts = Schemas["SessionVerdicts"];

/** "12 good · 3 acceptable · 5 poor (25 % poor)", with the sessions too short to judge when any. */
export function verdictCountsText(v: Verdicts | undefined): string {
  if (!v || v.good + v.acceptable + v.poor + v.unjudged === 0) {
    return "no sessions";
  }
  const share = v.poorShare === null ? "" : ` (${percent(v.poorShare * 100)} poor)`;
  const short = v.unjudged ? `, ${v.unjudged} too short to judge` : "";
  return `${v.good} good · ${v.acceptable} acceptable · ${v.poor} poor${share}${short}`;
}
