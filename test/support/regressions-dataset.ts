// Seeded, deterministic sessions for the build-regression tests (docs/analytics.md, "Build
// regressions"): builds whose sessions are drawn per hardware group from known distributions, with a
// chosen shift of the candidate, so the verdicts have a truth to meet. Each session has its own level
// (sessions differ: a player's settings, a scene) and its samples scatter around it; both are lognormal,
// as frame times are. Samples are float32 values, as the wire carries them.
import { type GenEvent, rng } from "./analytics-dataset.js";

export { rng };

/** A standard normal draw (Box–Muller). */
export function normal(r: () => number): number {
  const u = 1 - r();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * r());
}

export type GroupSpec = {
  /** The device's gpu; undefined: the sessions send no device context. */
  gpu?: string;
  /**
   * An engine SDK's session: no device message, but one `device_info` event naming this gpu, sent
   * after all of the session's samples.
   */
  deviceInfoGpu?: string;
  platform: string;
  sessions: number;
  /** Median frame time of the group's sessions, ms. */
  frameTimeMs: number;
  /** Multiplier of the candidate's samples (1.12: +12 %). */
  shift: number;
  /** Lognormal sd of the session levels and of the samples around them. */
  sessionSd: number;
  sampleSd: number;
  samplesPerSession: number;
};

/** Where the sessions' samples are: four cells of 25 units of map `arena`, one of them the hotspot. */
export const ARENA_CELLS = [
  { x: 0, y: 0 },
  { x: 25, y: 0 },
  { x: 0, y: 25 },
  { x: 100, y: 100 },
] as const;
export const HOTSPOT = ARENA_CELLS[3];

export type BuildPairSpec = {
  baseline: string;
  candidate: string;
  groups: GroupSpec[];
  /** Multiplier of the candidate's samples in the hotspot cell (on top of the group's shift). */
  hotspotShift: number;
  /** Microseconds of the baseline's first sample; the candidate starts an hour later. */
  startUs: number;
};

/**
 * Events of two builds: per group and build, `sessions` sessions, each with `samplesPerSession`
 * frame_sample events (frame time and fps = 1000 / frame time) a second apart, cycling through the
 * arena's cells (a session with 8 samples has 2 in each). Session ids name the build and group.
 */
export function buildPairEvents(seed: number, spec: BuildPairSpec): GenEvent[] {
  const r = rng(seed);
  const events: GenEvent[] = [];
  for (const [side, buildId] of [
    [0, spec.baseline],
    [1, spec.candidate],
  ] as const) {
    let tsUs = spec.startUs + side * 3_600_000_000;
    spec.groups.forEach((g, gi) => {
      for (let s = 0; s < g.sessions; s++) {
        const level = g.frameTimeMs * Math.exp(g.sessionSd * normal(r));
        const sessionId = `${buildId}-g${gi}-s${s}`;
        for (let k = 0; k < g.samplesPerSession; k++) {
          const cell = ARENA_CELLS[k % ARENA_CELLS.length] ?? HOTSPOT;
          const inHotspot = cell === HOTSPOT;
          const shift = side === 1 ? g.shift * (inHotspot ? spec.hotspotShift : 1) : 1;
          const frameTimeMs = Math.fround(level * shift * Math.exp(g.sampleSd * normal(r)));
          events.push({
            tsUs: tsUs,
            eventName: "frame_sample",
            sessionId,
            playerId: `p-${sessionId}`,
            buildId,
            mapId: "arena",
            platform: g.platform,
            pos: { x: cell.x + 1 + (k % 20), y: cell.y + 2 + (k % 19) },
            perf: { frameTimeMs, fps: Math.fround(1000 / frameTimeMs) },
            ...(g.gpu === undefined ? {} : { device: { gpu: g.gpu } }),
          });
          tsUs += 1_000_000;
        }
        if (g.deviceInfoGpu !== undefined) {
          events.push({
            tsUs,
            eventName: "device_info",
            sessionId,
            playerId: `p-${sessionId}`,
            buildId,
            mapId: "",
            platform: g.platform,
            attributes: { gpu: g.deviceInfoGpu, device_model: "Desktop PC" },
          });
          tsUs += 1_000_000;
        }
      }
    });
  }
  return events;
}
