// Performance samples for perf_heartbeat: frame times from requestAnimationFrame, the JS heap where the
// browser exposes it (Chromium's performance.memory), and GPU time where EXT_disjoint_timer_query allows.

/** Intervals kept per heartbeat for the refresh rate (10 s at 240 Hz is 2,400). */
const MAX_INTERVALS = 4096;
/** Intervals a heartbeat needs before it says anything of the refresh rate. */
const MIN_INTERVALS = 10;

/**
 * Frame times between requestAnimationFrame callbacks, averaged over each heartbeat, and the display's
 * refresh rate. The browser calls requestAnimationFrame once per display refresh while the page keeps
 * up, and every second or third refresh when it does not, so the short intervals are the refresh's. A
 * heartbeat's rate is 1000 / its 10th-percentile interval (a stray short interval after a long one does
 * not move it); the rate reported is the highest seen in the session, since a page that runs slower than
 * the display all heartbeat long shows only a multiple of the refresh.
 */
export class FrameSampler {
  private frames = 0;
  private totalMs = 0;
  private last = 0;
  private handle = 0;
  private gpu: GpuTimer | undefined;
  private intervals: number[] = [];
  private hz: number | undefined;

  start(gpu?: GpuTimer): void {
    this.gpu = gpu;
    if (typeof requestAnimationFrame === "undefined") {
      return;
    }
    const tick = (t: number) => {
      this.frame(t);
      this.handle = requestAnimationFrame(tick);
    };
    this.handle = requestAnimationFrame(tick);
  }

  stop(): void {
    if (typeof cancelAnimationFrame !== "undefined") {
      cancelAnimationFrame(this.handle);
    }
  }

  /** One frame began at `t` (ms). A gap of a second or more (a hidden tab) is not a frame time. */
  frame(t: number): void {
    const dt = t - this.last;
    if (this.last && dt > 0 && dt < 1000) {
      this.frames++;
      this.totalMs += dt;
      if (this.intervals.length < MAX_INTERVALS) {
        this.intervals.push(dt);
      }
    }
    this.last = t;
    this.gpu?.frame();
  }

  /**
   * The averages since the last call, and the display's refresh rate in Hz (whole numbers; undefined
   * until a heartbeat had enough frames); undefined when no frame was drawn.
   */
  take(): { fps: number; frameTimeMs: number; gpuTimeMs?: number; displayHz?: number } | undefined {
    const { frames, totalMs, intervals } = this;
    this.frames = 0;
    this.totalMs = 0;
    this.intervals = [];
    if (intervals.length >= MIN_INTERVALS) {
      const sorted = intervals.sort((a, b) => a - b);
      const p10 = sorted[Math.max(0, Math.ceil(0.1 * sorted.length) - 1)] as number;
      const hz = Math.round(1000 / p10);
      this.hz = Math.max(this.hz ?? 0, hz);
    }
    if (!frames) {
      return undefined;
    }
    const frameTimeMs = totalMs / frames;
    return { fps: 1000 / frameTimeMs, frameTimeMs, gpuTimeMs: this.gpu?.take(), displayHz: this.hz };
  }
}

/** The JS heap in use, in bytes (Chromium only). */
export function heapBytes(): number | undefined {
  const memory = (performance as { memory?: { usedJSHeapSize?: number } }).memory;
  return memory?.usedJSHeapSize || undefined;
}

export type GpuTimer = { frame(): void; take(): number | undefined };

/** The timer-query calls of WebGL2 (EXT_disjoint_timer_query_webgl2) and WebGL1 (EXT_disjoint_timer_query). */
type Queries = {
  create(): unknown;
  begin(q: unknown): void;
  end(): void;
  available(q: unknown): boolean;
  /** Nanoseconds. */
  result(q: unknown): number;
  remove(q: unknown): void;
  disjoint(): boolean;
};

type Ext = Record<string, number> & Record<string, (...args: unknown[]) => unknown>;

function queriesOf(gl: WebGLRenderingContext | WebGL2RenderingContext): Queries | undefined {
  const gl2 = gl as WebGL2RenderingContext;
  const ext2 =
    typeof gl2.createQuery === "function"
      ? (gl.getExtension("EXT_disjoint_timer_query_webgl2") as Ext | null)
      : null;
  if (ext2) {
    return {
      create: () => gl2.createQuery(),
      begin: (q) => gl2.beginQuery(ext2.TIME_ELAPSED_EXT as number, q as WebGLQuery),
      end: () => gl2.endQuery(ext2.TIME_ELAPSED_EXT as number),
      available: (q) => Boolean(gl2.getQueryParameter(q as WebGLQuery, gl2.QUERY_RESULT_AVAILABLE)),
      result: (q) => Number(gl2.getQueryParameter(q as WebGLQuery, gl2.QUERY_RESULT)),
      remove: (q) => gl2.deleteQuery(q as WebGLQuery),
      disjoint: () => Boolean(gl.getParameter(ext2.GPU_DISJOINT_EXT as number)),
    };
  }
  const ext = gl.getExtension("EXT_disjoint_timer_query") as Ext | null;
  if (!ext) {
    return undefined;
  }
  return {
    create: () => ext.createQueryEXT?.(),
    begin: (q) => ext.beginQueryEXT?.(ext.TIME_ELAPSED_EXT, q),
    end: () => ext.endQueryEXT?.(ext.TIME_ELAPSED_EXT),
    available: (q) => Boolean(ext.getQueryObjectEXT?.(q, ext.QUERY_RESULT_AVAILABLE_EXT)),
    result: (q) => Number(ext.getQueryObjectEXT?.(q, ext.QUERY_RESULT_EXT)),
    remove: (q) => ext.deleteQueryEXT?.(q),
    disjoint: () => Boolean(gl.getParameter(ext.GPU_DISJOINT_EXT as number)),
  };
}

/**
 * GPU time per frame on the game's WebGL context: a TIME_ELAPSED query from one animation frame to the
 * next brackets all the frame's GL work. Results arrive a few frames later and are discarded when the
 * GPU reports a disjoint (the timer was unreliable). None where the extension is missing, which is
 * most browsers outside development flags.
 */
export function gpuTimer(
  gl: WebGLRenderingContext | WebGL2RenderingContext | undefined,
): GpuTimer | undefined {
  const q = gl && queriesOf(gl);
  if (!q) {
    return undefined;
  }
  let active: unknown;
  const pending: unknown[] = [];
  let total = 0;
  let count = 0;
  return {
    frame() {
      if (active) {
        q.end();
        pending.push(active);
      }
      while (pending.length && q.available(pending[0])) {
        const done = pending.shift();
        if (!q.disjoint()) {
          total += q.result(done) / 1e6;
          count++;
        }
        q.remove(done);
      }
      // A context that never answers (lost, or a driver that stalls) must not grow this without bound.
      if (pending.length > 8) {
        q.remove(pending.shift());
      }
      active = q.create();
      if (active) {
        q.begin(active);
      }
    },
    take() {
      const avg = count ? total / count : undefined;
      total = 0;
      count = 0;
      return avg;
    },
  };
}
