import { describe, expect, it } from "vitest";
import type { components } from "../../workers/api/web/client/api.gen.js";
import { groupBoundText, hitchText, verdictCountsText, whyText } from "../../workers/api/web/client/why.js";

// The cell panel's "Why" sentences (workers/api/web/client/why.ts) from drill-down answers.

type Schemas = components["schemas"];
type Why = Schemas["CellWhy"];
type Group = Schemas["CellBreakdownGroup"];

const zero = { gpu: 0, game_thread: 0, render_thread: 0, io: 0, memory: 0, unknown: 0 };
const count = (judged: number, hitches: number) => ({
  judged,
  hitches,
  pct: judged ? Math.round((hitches / judged) * 10_000) / 100 : null,
});

function why(slow: Partial<typeof zero>, over: Partial<Why> = {}): Why {
  const counts = { ...zero, ...slow };
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  return {
    basis: "frame_time",
    threshold: 33,
    heartbeats: 20,
    slow: total,
    bounds: (Object.keys(zero) as Array<keyof typeof zero>).map((bound) => ({
      bound,
      slow: counts[bound],
      pct: total ? Math.round((counts[bound] / total) * 10_000) / 100 : null,
    })),
    hitches: {
      ...count(15, 3),
      heartbeatIntervalMs: 10_000,
      minutesPlayed: 2.5,
      perMinute: 1.2,
      firstVisit: count(3, 3),
      laterVisits: count(12, 0),
    },
    ...over,
  } as Why;
}

function group(key: string | null, bounds: Partial<typeof zero>): Group {
  const b = { ...zero, ...bounds };
  return {
    key,
    samples: 10,
    meanFps: 30,
    p95FrameTime: 40,
    failingPct: null,
    slow: Object.values(b).reduce((x, y) => x + y, 0),
    bounds: b,
    hitchJudged: 10,
    hitches: 1,
    hitchesPerMinute: 0.6,
  };
}

describe("whyText", () => {
  it("names the top bound and the GPU with most of it", () => {
    const text = whyText(why({ gpu: 6, game_thread: 2 }), [
      group("RTX 4070", { game_thread: 2 }),
      group("RTX 3060", { gpu: 6 }),
      group(null, { gpu: 9 }),
    ]);
    expect(text).toBe(
      "Why: 75 % of slow frames GPU-bound, most on RTX 3060 (6 of its 6); frame time over 33 ms.",
    );
  });

  it("says so when nothing is slow, and speaks of frames without a profile", () => {
    expect(whyText(why({}), [])).toBe("Why: no slow frames here (frame time over 33 ms).");
    expect(whyText(why({ io: 3 }, { basis: "all", threshold: null }), [])).toBe(
      "Why: 100 % of frames stalled on disk reads; every heartbeat, no profile chosen.",
    );
    expect(whyText(why({ gpu: 4 }, { basis: "budget", threshold: null }), [])).toBe(
      "Why: 100 % of slow frames GPU-bound; over one refresh of each display, no profile mark chosen.",
    );
  });
});

describe("hitchText", () => {
  it("flags stutter on first entry", () => {
    expect(hitchText(why({}))).toBe(
      "Hitches: 1.2 per minute played, 20 % of heartbeats; first visits 100 %, later 0 %: stutter on first entry.",
    );
  });

  it("no flag when later visits hitch as often", () => {
    const w = why({});
    w.hitches.firstVisit = count(4, 1);
    w.hitches.laterVisits = count(8, 2);
    expect(hitchText(w)).toBe(
      "Hitches: 1.2 per minute played, 20 % of heartbeats; first visits 25 %, later 25 %.",
    );
  });
});

describe("groupBoundText", () => {
  it("the group's most common bound and its share", () => {
    expect(groupBoundText(group("x", { memory: 3, unknown: 1 }))).toBe("under memory pressure 75 %");
    expect(groupBoundText(group("x", {}))).toBe("—");
  });
});

describe("verdictCountsText", () => {
  it("a side's sessions by verdict, the poor share, and the sessions too short to judge", () => {
    expect(verdictCountsText({ good: 12, acceptable: 3, poor: 5, unjudged: 0, poorShare: 0.25 })).toBe(
      "12 good · 3 acceptable · 5 poor (25 % poor)",
    );
    expect(verdictCountsText({ good: 0, acceptable: 0, poor: 0, unjudged: 4, poorShare: null })).toBe(
      "0 good · 0 acceptable · 0 poor, 4 too short to judge",
    );
    expect(verdictCountsText({ good: 0, acceptable: 0, poor: 0, unjudged: 0, poorShare: null })).toBe(
      "no sessions",
    );
    expect(verdictCountsText(undefined)).toBe("no sessions");
  });
});
