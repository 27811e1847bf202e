import { beforeAll, describe, expect, it } from "vitest";
import type { GenEvent } from "../support/analytics-dataset.js";
import { clocked, getData, ingestAll } from "../support/analytics-ingest.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { normal, rng } from "../support/regressions-dataset.js";

// builds/compare's session-level fields (verdict, ci95, sessionDiffPct, the session counts) are
// builds/regressions' by=platform answer with its defaults: overall, or the platform's group judged
// with the other platforms'. Compare reads the session values of all three judged metrics at once and
// receives only each build's central ranks (regressions.ts sessionValueRanks); here, with hundreds of
// sessions a build (ranks left out) and a few dozen (all kept), it must answer what the regressions do.

const MB = 1_048_576;
const BASE = "7.0.0";
const CAND = "7.1.0";
const JUDGED = ["frame_time", "memory", "gpu_time"] as const;

type Group = {
  key: string | null;
  baseline: { sessions: number; median: number | null };
  candidate: { sessions: number; median: number | null };
  diffPct: number | null;
  ci95: [number, number] | null;
  verdict: string;
};
type Regressions = { overall: Group; groups: Group[] };
type Diff = {
  metric: string;
  verdict: string | null;
  ci95: [number, number] | null;
  sessionDiffPct: number | null;
  baselineSessions: number | null;
  candidateSessions: number | null;
};

/** Per platform: sessions per build, and the candidate's change of frame time, memory and GPU time. */
const PLATFORMS = [
  { platform: "windows", sessions: 400, frame: 1.06, memory: 1, gpu: 1 },
  { platform: "ps5", sessions: 45, frame: 1, memory: 0.9, gpu: 1.15 },
  { platform: "android", sessions: 12, frame: 1.3, memory: 1, gpu: 1 },
] as const;

let t: Tenant & { now: number };
const nowMs = Date.now();

/** Each session: three samples on map arena or harbor; a third of the sessions send no GPU time. */
function dataset(): GenEvent[] {
  const r = rng(2027);
  const events: GenEvent[] = [];
  let tsUs = (nowMs - 5 * 3_600_000) * 1000;
  for (const [side, buildId] of [
    [0, BASE],
    [1, CAND],
  ] as const) {
    for (const p of PLATFORMS) {
      for (let s = 0; s < p.sessions; s++) {
        const level = Math.exp(0.08 * normal(r));
        const sessionId = `${buildId}-${p.platform}-${s}`;
        for (let k = 0; k < 3; k++) {
          const noise = () => Math.exp(0.1 * normal(r));
          const frameTimeMs = Math.fround(16 * level * (side ? p.frame : 1) * noise());
          events.push({
            tsUs,
            eventName: "frame_sample",
            sessionId,
            playerId: `p-${sessionId}`,
            buildId,
            mapId: s % 2 === 0 ? "arena" : "harbor",
            platform: p.platform,
            perf: {
              frameTimeMs,
              fps: Math.fround(1000 / frameTimeMs),
              memoryUsedBytes: Math.round(2000 * MB * level * (side ? p.memory : 1) * noise()),
              ...(s % 3 === 0 ? {} : { gpuTimeMs: Math.fround(8 * level * (side ? p.gpu : 1) * noise()) }),
            },
          });
          tsUs += 1000;
        }
      }
    }
  }
  return events;
}

beforeAll(async () => {
  t = clocked(await seedTenant("pro", "Compare Verdicts Studio"), nowMs) as Tenant & { now: number };
  await ingestAll(t, dataset());
}, 180_000);

const qs = (q: Record<string, string | undefined>) =>
  new URLSearchParams(Object.entries(q).flatMap(([k, v]) => (v === undefined ? [] : [[k, v]])));

describe("builds/compare's verdicts", () => {
  it.each<{ platform?: string; mapId?: string }>([
    {},
    { platform: "windows" },
    { platform: "ps5" },
    { platform: "android" },
    { platform: "xbox" },
    { mapId: "arena" },
    { mapId: "harbor", platform: "windows" },
  ])("are builds/regressions' by=platform answer with %o", async (f) => {
    const cmp = await getData<{ diffs: Diff[] }>(
      t,
      `/builds/compare?${qs({ baseline: BASE, candidate: CAND, days: "7", fresh: "1", ...f })}`,
    );
    for (const metric of JUDGED) {
      const reg = await getData<Regressions>(
        t,
        `/builds/regressions?${qs({ baseline: BASE, candidate: CAND, days: "7", metric, by: "platform", mapId: f.mapId })}`,
      );
      const g =
        f.platform === undefined
          ? reg.overall
          : (reg.groups.find((x) => x.key === f.platform) ?? {
              baseline: { sessions: 0 },
              candidate: { sessions: 0 },
              diffPct: null,
              ci95: null,
              verdict: "insufficient_data",
            });
      const d = cmp.diffs.find((x) => x.metric === metric);
      expect(
        {
          verdict: d?.verdict,
          ci95: d?.ci95,
          sessionDiffPct: d?.sessionDiffPct,
          baselineSessions: d?.baselineSessions,
          candidateSessions: d?.candidateSessions,
        },
        metric,
      ).toEqual({
        verdict: g.verdict,
        ci95: g.ci95,
        sessionDiffPct: g.diffPct,
        baselineSessions: g.baseline.sessions,
        candidateSessions: g.candidate.sessions,
      });
    }
  });

  it("judge what the data was drawn with", async () => {
    const verdicts = async (platform?: string) => {
      const cmp = await getData<{ diffs: Diff[] }>(
        t,
        `/builds/compare?${qs({ baseline: BASE, candidate: CAND, days: "7", fresh: "1", platform })}`,
      );
      return Object.fromEntries(
        cmp.diffs.map((d) => [d.metric, [d.verdict, d.baselineSessions, d.candidateSessions]]),
      );
    };
    // A third of the sessions (s % 3 = 0) sent no GPU time.
    const gpuSessions = (n: number) => n - Math.ceil(n / 3);
    expect(await verdicts("windows")).toMatchObject({
      frame_time: ["regressed", 400, 400],
      memory: ["no_change", 400, 400],
      gpu_time: ["no_change", gpuSessions(400), gpuSessions(400)],
      "io.read_bytes": [null, null, null],
    });
    expect(await verdicts("ps5")).toMatchObject({
      frame_time: ["no_change", 45, 45],
      memory: ["improved", 45, 45],
      gpu_time: ["regressed", gpuSessions(45), gpuSessions(45)],
    });
    expect(await verdicts("android")).toMatchObject({
      frame_time: ["insufficient_data", 12, 12],
    });
    expect((await verdicts()).frame_time?.[1]).toBe(457);
  });
});
