// Why a frame is slow: the rules that name what bounds a heartbeat's frame and which heartbeats are
// hitches, as SQL over the columns telemetry.cell_samples keeps (0035_cell_samples_frame_causes.sql).
// docs/analytics.md, "Why a cell is slow", states each rule and the reason for its constants; the cell
// drill-down (cell.ts) counts them per cell and per breakdown group.
//
// A heartbeat is one frame sampled by the SDK (Unity reads FrameTimingManager's latest frame: its
// frame time, GPU time, main-thread and render-thread times) plus its window's totals since the
// previous heartbeat (io.read_time_ms: the disk read time of the window).

import { CH_SESSION_VALUES } from "../../shared/clickhouse.js";
import { METRIC, worseOp } from "../../shared/telemetry/metrics.js";

/** What bounds a frame, in the order the rule tries them; `unknown` last. The codes are the indexes. */
export const BOUNDS = ["gpu", "game_thread", "render_thread", "io", "memory", "unknown"] as const;
export type Bound = (typeof BOUNDS)[number];

/** A stage (GPU, game thread, render thread) bounds the frame when it takes at least this share of it. */
export const STAGE_SHARE = 0.8;
/** Memory pressure: memory used at least this share of the device's memory total. */
export const MEMORY_PRESSURE = 0.9;
/** A hitch: a frame time more than this many times its session's median frame time. */
export const HITCH_FACTOR = 2;

/**
 * A sample judged for a hitch (it has a frame time and its session a typical frame `typical`), and a
 * hitch (over HITCH_FACTOR times it): the cell drill-down's and the heatmap's hitches mode's one rule.
 */
export const HITCH_JUDGED = (typical: string) => `isNotNull(frame_time_ms) AND ${typical} > 0`;
export const IS_HITCH = (typical: string) =>
  `${HITCH_JUDGED(typical)} AND frame_time_ms > ${HITCH_FACTOR} * ${typical}`;
/**
 * Each session's median frame time on the map over the window's days (`st_frame`, quantized as every
 * stored median: at most 0.39 % below the raw one), as `st_session`: the typical frame a hitch is measured
 * against, from telemetry.session_values (key project, build, day, map, session). `narrow` (SQL after
 * AND, or "") limits its builds and sessions to the read's. Bound with {projectId:UUID}, {mapId:String},
 * {from:DateTime64(6, 'UTC')} and {to:DateTime64(6, 'UTC')}.
 */
export const sessionTypicalFrames = (narrow: string) => `(
      SELECT session AS st_session, quantileExactLowMerge(0.5)(frame_q) AS st_frame
      FROM ${CH_SESSION_VALUES}
      WHERE project_id = {projectId:UUID} AND map_id = {mapId:String}
        AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day <= toDate({to:DateTime64(6, 'UTC')})
        ${narrow ? `AND ${narrow}` : ""}
      GROUP BY session)`;
/** Consecutive heartbeats of a session further apart than this are separate visits (no interval). */
export const MAX_HEARTBEAT_GAP_MS = 60_000;

/**
 * The frame's length in ms: its frame time, else 1000 / fps (an SDK that sends only fps), else NULL.
 * Columns as cell_samples names them.
 */
export const FRAME_MS = `if(isNotNull(frame_time_ms), toFloat64(frame_time_ms), if(ifNull(fps, 0) > 0, 1000 / toFloat64(fps), NULL))`;

/**
 * The bound's code (an index of BOUNDS) of a heartbeat, first match:
 * 1. a stage: the longest of GPU, game-thread and render-thread time, when it is at least STAGE_SHARE of
 *    the frame (ties: GPU, then game thread, then render thread);
 * 2. io: the window's disk read time is at least the frame's length;
 * 3. memory: memory used is at least MEMORY_PRESSURE of the device's memory total (`memoryTotal`, MB);
 * 4. unknown: nothing collected explains the frame (or no frame length or field was collected).
 */
export function boundCodeSql(memoryTotal: string): string {
  const gpu = "ifNull(toFloat64(gpu_time_ms), 0)";
  const game = "ifNull(toFloat64(game_thread_ms), 0)";
  const render = "ifNull(toFloat64(render_thread_ms), 0)";
  const code = (b: Bound) => BOUNDS.indexOf(b);
  return `multiIf(
    isNull(${FRAME_MS}), ${code("unknown")},
    greatest(${gpu}, ${game}, ${render}) > 0 AND greatest(${gpu}, ${game}, ${render}) >= ${STAGE_SHARE} * ${FRAME_MS},
      multiIf(${gpu} >= greatest(${game}, ${render}), ${code("gpu")}, ${game} >= ${render}, ${code("game_thread")}, ${code("render_thread")}),
    ifNull(io_read_time_ms, 0) > 0 AND io_read_time_ms >= ${FRAME_MS}, ${code("io")},
    ${memoryTotal} > 0 AND ifNull(memory_used_bytes, 0) >= ${MEMORY_PRESSURE} * ${memoryTotal} * 1048576, ${code("memory")},
    ${code("unknown")})`;
}

/**
 * What a slow heartbeat is judged by: a profile's frame-time mark, else its fps mark; without either, the
 * display's frame budget (over 1000 / display.hz) where the cell's heartbeats carry the refresh rate,
 * else every heartbeat.
 */
export const SLOW_BASES = ["frame_time", "fps", "budget", "all"] as const;
export type SlowBasis =
  | { basis: "frame_time" | "fps"; threshold: number }
  | { basis: "budget" | "all"; threshold: null };

/** Over the display's frame budget: the frame longer than one refresh (NULL rate: not judged, 0). */
export const OVER_BUDGET = `ifNull(${FRAME_MS} > 1000 / display_hz, 0)`;

/** The refresh rate whose budget judges a heartbeat sent without display.hz (Android vitals' 16 ms). */
export const DEFAULT_DISPLAY_HZ = 60;

/**
 * Over its display's frame budget, 60 Hz where the rate was not sent: the heatmap's "bound by" mode and
 * the session verdicts (0036, 0037 hold the same rule in their views).
 */
export const OVER_DEFAULT_BUDGET = `ifNull(${FRAME_MS} > 1000 / ifNull(display_hz, ${DEFAULT_DISPLAY_HZ}), 0)`;

type Marks = { good: number | null; warn: number | null };

/** A profile's red mark of a metric: warn, else good (the heatmap's red; the drill-down's failing share). */
export const redMark = (marks: Marks | undefined): number | null =>
  marks ? (marks.warn ?? marks.good) : null;

/** The basis a profile's marks give: its frame-time mark, else its fps mark, else none ("all"). */
export function slowBasis(marks: { frame_time: Marks; fps: Marks } | undefined): SlowBasis {
  const frame = redMark(marks?.frame_time);
  if (frame !== null) {
    return { basis: "frame_time", threshold: frame };
  }
  const fps = redMark(marks?.fps);
  return fps !== null ? { basis: "fps", threshold: fps } : { basis: "all", threshold: null };
}

/** Whether a heartbeat is slow under `s` (worse than the mark; equal passes), with {slowMark:Float64}. */
export function slowSql(s: SlowBasis): string {
  if (s.basis === "frame_time" || s.basis === "fps") {
    const m = METRIC[s.basis];
    return `ifNull(${m.column} ${worseOp(m)} {slowMark:Float64}, 0)`;
  }
  return "1";
}

/** Counts per bound code ([codes], [counts], as sumMap gives them), every bound present, in BOUNDS order. */
export function boundCounts(map: unknown): Record<Bound, number> {
  const [codes, counts] = (map as [unknown[], unknown[]] | undefined) ?? [[], []];
  const out = Object.fromEntries(BOUNDS.map((b) => [b, 0])) as Record<Bound, number>;
  codes.forEach((c, i) => {
    const b = BOUNDS[Number(c)];
    if (b !== undefined) {
      out[b] = Number(counts[i]);
    }
  });
  return out;
}
