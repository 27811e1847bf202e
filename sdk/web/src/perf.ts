// Performance samples for perf_heartbeat: frame times from requestAnimationFrame, the JS heap where the
// browser exposes it (Chromium's performance.memory), and GPU time where EXT_disjoint_timer_query allows.

/** Frame times between requestAnimationFrame callbacks, averaged over each heartbeat. */
export class FrameSampler {
  private frames = 0;
  private totalMs = 0;
  private last = 0;
  private handle = 0;
  private gpu: GpuTimer | undefined;

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
    }
    this.last = t;
    this.gpu?.frame();
  }

  /** The averages since the last call; undefined when no frame was drawn. */
  take(): { fps: number; frameTimeMs: number; gpuTimeMs?: number } | undefined {
    const { frames, totalMs } = this;
    this.frames = 0;
    this.totalMs = 0;
    if (!frames) {
      return undefined;
    }
    const frameTimeMs = totalMs / frames;
    return { fps: 1000 / frameTimeMs, frameTimeMs, gpuTimeMs: this.gpu?.take() };
  }
}

/** The JS heap in use, in bytes (Chromium only). */
export function heapBytes(): number | undefined {
  const memory = (performance as { memory?: { usedJSHeapSize?: number } }).memory;
  return memory?.usedJSHeapSize || undefined;
}

export type GpuTimer = { frame(): void; take(): number | undefined };

/**
 * GPU time per frame on the game's WebGL2 context: a TIME_ELAPSED query from one animation frame to the
 * next brackets all the frame's GL work. Results arrive a few frames later and are discarded when the
 * GPU reports a disjoint (the timer was unreliable). None where the extension is missing, which is
 * most browsers outside development flags.
 */
export function gpuTimer(gl: WebGL2RenderingContext | undefined): GpuTimer | undefined {
  const ext = gl?.getExtension("EXT_disjoint_timer_query_webgl2") as
    | { TIME_ELAPSED_EXT: number; GPU_DISJOINT_EXT: number }
    | null
    | undefined;
  if (!gl || !ext) {
    return undefined;
  }
  let active: WebGLQuery | null = null;
  const pending: WebGLQuery[] = [];
  let total = 0;
  let count = 0;
  return {
    frame() {
      if (active) {
        gl.endQuery(ext.TIME_ELAPSED_EXT);
        pending.push(active);
      }
      while (pending.length && gl.getQueryParameter(pending[0] as WebGLQuery, gl.QUERY_RESULT_AVAILABLE)) {
        const q = pending.shift() as WebGLQuery;
        if (!gl.getParameter(ext.GPU_DISJOINT_EXT)) {
          total += gl.getQueryParameter(q, gl.QUERY_RESULT) / 1e6;
          count++;
        }
        gl.deleteQuery(q);
      }
      // A context that never answers (lost, or a driver that stalls) must not grow this without bound.
      if (pending.length > 8) {
        gl.deleteQuery(pending.shift() as WebGLQuery);
      }
      active = gl.createQuery();
      if (active) {
        gl.beginQuery(ext.TIME_ELAPSED_EXT, active);
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
