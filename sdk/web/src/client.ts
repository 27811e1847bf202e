// One telemetry session of a browser game: events are clamped and encoded when tracked, gathered into
// batches (by count, bytes and interval), queued (IndexedDB) and sent one batch at a time, with the
// engine SDKs' answers policy (./retry.ts).
import {
  type AttributeValue,
  attributes,
  camera,
  clampEvent,
  metrics,
  type Position,
  position,
  truncate,
} from "./clamp.js";
import { collectDevice } from "./device.js";
import {
  encodeBatch,
  encodeDevice,
  encodeEvent,
  framedSize,
  type WireDevice,
  type WireEvent,
} from "./encode.js";
import { LIMITS } from "./limits.js";
import { FrameSampler, gpuTimer, heapBytes } from "./perf.js";
import { type Batch, BatchQueue } from "./queue.js";
import { type Backoff, classify, parseRetryAfter, retryDelayMs } from "./retry.js";

export const SDK_VERSION = "0.1.0";

export type TelemetryOptions = {
  /** The ingest endpoint, e.g. "https://ingest.example.com/v1/events" (an origin alone gets /v1/events). */
  endpoint: string;
  /** An ingest key of the project (it can only send events, so it is safe to ship in a game). */
  apiKey: string;
  /** The game's build, e.g. "1.4.2" or a commit: what Builds and Compare group by. */
  buildId: string;
  /** Default "Web". */
  platform?: string;
  /** The engine and its version, e.g. "Phaser 3.80". */
  engineVersion?: string;
  /** Share of sessions that send anything, 0 to 1 (decided once per session). Default 1. */
  sampleRate?: number;
  playerId?: string;
  mapId?: string;
  /** DeviceContext build_config, e.g. "development" or "release". */
  buildConfig?: string;
  /** "automated" for bots and test runs, which the dashboards can tell apart. Default "player". */
  source?: "player" | "automated";
  /** The game's WebGL context: its GPU name, and GPU time per frame where the timer query extension exists. */
  webgl?: WebGLRenderingContext | WebGL2RenderingContext;
  /** perf_heartbeat interval; 0 turns it off. Default 10 s. */
  heartbeatMs?: number;
  /** The longest an event waits before its batch is sent. Default 5 s. */
  flushIntervalMs?: number;
  /** Events per batch. Default 100. */
  maxBatchEvents?: number;
  /** Encoded bytes per batch; the default 60,000 fits the browser's 64 KiB keepalive budget on pagehide. */
  maxBatchBytes?: number;
  /** Events kept undelivered (offline, endpoint down); the oldest batches go first. Default 10,000. */
  maxQueuedEvents?: number;
  /** Keep undelivered events in IndexedDB across reloads. Default true. */
  persist?: boolean;
  /** gzip bodies with CompressionStream where it exists. Default true. */
  compress?: boolean;
  /** A request not answered in this many ms is given up and retried with backoff. Default 30 s. */
  requestTimeoutMs?: number;
  /** Retry backoff: base and ceiling in ms. Default 1 s and 60 s. */
  retry?: Partial<Backoff>;
  /** Collect device context and frame times (off in tests without a page). Default true. */
  autoCollect?: boolean;
  /** Replaces the global fetch (tests, custom transports). */
  fetch?: typeof fetch;
};

export type TrackData = {
  /** World position; defaults to the last setPosition(). */
  position?: Position;
  attributes?: Record<string, AttributeValue>;
  metrics?: Record<string, number>;
};

/** Counters since init, for a debug overlay or a test. */
export type TelemetryStats = {
  tracked: number;
  delivered: number;
  dropped: number;
  queued: number;
  pending: number;
};

const PREFIX = "[game-telemetry]";
/** The browser allows 64 KiB of keepalive bodies in flight per page; a little is left for the rest. */
const KEEPALIVE_BUDGET = 60_000;

function newSessionId(): string {
  if (typeof crypto !== "undefined" && "randomUUID" in crypto) {
    return crypto.randomUUID();
  }
  return Array.from({ length: 4 }, () => Math.random().toString(16).slice(2, 10)).join("-");
}

function nowUs(): number {
  const origin = typeof performance !== "undefined" ? performance.timeOrigin + performance.now() : Date.now();
  return Math.round(origin * 1000);
}

function endpointUrl(endpoint: string): string {
  const url = new URL(endpoint, typeof location !== "undefined" ? location.href : undefined);
  if (url.pathname === "/" || url.pathname === "") {
    url.pathname = "/v1/events";
  }
  return url.toString();
}

async function gzip(raw: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([raw as BlobPart]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export class Telemetry {
  readonly sessionId = newSessionId();
  /** False when the session was sampled out: then nothing is collected or sent. */
  readonly enabled: boolean;
  /** Settles when the queue left by earlier pages is loaded (and its sending started). */
  readonly ready: Promise<void>;
  private readonly url: string;
  private readonly queue: BatchQueue;
  private readonly fetchFn: typeof fetch;
  private readonly backoff: Backoff;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  private device: Uint8Array | undefined;
  private deviceFields: WireDevice = {};
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private pendingEntries = 0;
  private mapId: string;
  private playerId: string;
  private pos: { x: number; y: number; z: number } | undefined;
  private cam: { yaw: number; pitch: number } | undefined;
  private readonly sampler = new FrameSampler();
  private timers: ReturnType<typeof setInterval>[] = [];
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private retryAt = 0;
  private attempt = 0;
  private pumping: Promise<void> | undefined;
  private stopped = false;
  private readonly counts = { tracked: 0, delivered: 0, dropped: 0 };
  private readonly listeners: [EventTarget, string, EventListener][] = [];

  constructor(private readonly opts: TelemetryOptions) {
    if (!opts.endpoint || !opts.apiKey || !opts.buildId) {
      throw new TypeError(`${PREFIX} init needs endpoint, apiKey and buildId`);
    }
    this.url = endpointUrl(opts.endpoint);
    this.fetchFn = opts.fetch ?? ((input, init) => fetch(input, init));
    this.backoff = { baseMs: opts.retry?.baseMs ?? 1000, maxMs: opts.retry?.maxMs ?? 60_000 };
    this.maxEvents = Math.min(LIMITS.maxEvents, Math.max(1, opts.maxBatchEvents ?? 100));
    // Never above what ingest takes as a plain body, so a batch fits even where gzip is missing.
    this.maxBytes = Math.min(LIMITS.maxCompressedBytes - 1024, Math.max(1024, opts.maxBatchBytes ?? 60_000));
    this.mapId = truncate(opts.mapId, LIMITS.event.map_id);
    this.playerId = truncate(opts.playerId, LIMITS.event.player_id);
    this.enabled = Math.random() < (opts.sampleRate ?? 1);
    const name = `game-telemetry:${this.url}:${opts.apiKey.slice(0, 10)}`;
    // A sampled-out session leaves IndexedDB alone: an earlier sampled-in page's batches wait for the next one.
    const persist = this.enabled && opts.persist !== false;
    this.queue = new BatchQueue(name, persist, opts.maxQueuedEvents ?? 10_000, (n, why) =>
      this.dropped(n, why),
    );
    if (!this.enabled) {
      this.ready = Promise.resolve();
      return;
    }
    const auto = opts.autoCollect !== false;
    this.setDevice(
      auto
        ? collectDevice({ buildConfig: opts.buildConfig, gl: opts.webgl })
        : { buildConfig: opts.buildConfig },
    );
    this.track("session_start");
    if (auto) {
      this.sampler.start(gpuTimer(opts.webgl));
      const heartbeat = opts.heartbeatMs ?? 10_000;
      if (heartbeat > 0) {
        this.timers.push(setInterval(() => this.heartbeat(), heartbeat));
      }
    }
    this.timers.push(setInterval(() => this.flush(), opts.flushIntervalMs ?? 5_000));
    this.listen();
    this.ready = this.queue.load().then(() => void this.pump());
  }

  /** Records an event; sent with the next batch. */
  track(name: string, data: TrackData = {}): void {
    this.record(name, data, {});
  }

  private record(name: string, data: TrackData, perf: Partial<WireEvent>): void {
    if (!this.enabled || this.stopped) {
      return;
    }
    if (!name) {
      console.warn(`${PREFIX} track() needs an event name; the event is ignored`);
      return;
    }
    const event = clampEvent({
      ...perf,
      name,
      timestampUs: nowUs(),
      sessionId: this.sessionId,
      playerId: this.playerId,
      mapId: this.mapId,
      position: data.position ? position(data.position) : this.pos,
      camera: this.cam,
      attributes: attributes(data.attributes),
      metrics: [...(perf.metrics ?? []), ...metrics(data.metrics)],
      source: this.opts.source === "automated" ? 2 : 1,
      buildId: this.opts.buildId,
      platform: this.opts.platform ?? "Web",
      engineVersion: this.opts.engineVersion,
    });
    this.counts.tracked++;
    this.add(encodeEvent(event), 1 + (event.attributes?.length ?? 0) + (event.metrics?.length ?? 0));
  }

  /** The map (its id as registered on the Maps page) of the events that follow. */
  setMap(mapId: string): void {
    this.mapId = truncate(mapId, LIMITS.event.map_id);
  }

  /** The player of the events that follow; without one, a player is their session. */
  setPlayer(id: string | null | undefined): void {
    this.playerId = truncate(id ?? "", LIMITS.event.player_id);
  }

  /** The camera's yaw and pitch in degrees, sent with every event that follows. */
  setCamera(yaw: number, pitch: number): void {
    this.cam = camera(yaw, pitch);
  }

  /** The player's position in world units, sent with every event that has none of its own. */
  setPosition(x: number, y: number, z = 0): void {
    this.pos = position({ x, y, z });
  }

  /** Replaces the given device context fields (e.g. the resolution the game renders at); the rest stay. */
  setDevice(fields: WireDevice): void {
    const d = LIMITS.device;
    const device: WireDevice = { ...this.deviceFields, ...fields };
    this.deviceFields = device;
    this.device = encodeDevice({
      resolution: truncate(device.resolution, d.resolution),
      buildConfig: truncate(device.buildConfig, d.build_config),
      gpu: truncate(device.gpu, d.gpu),
      storage: truncate(device.storage, d.storage),
      cpu: truncate(device.cpu, d.cpu),
      osVersion: truncate(device.osVersion, d.os_version),
      deviceModel: truncate(device.deviceModel, d.device_model),
      memoryTotalMb: Math.min(0xffffffff, Math.max(0, Math.round(device.memoryTotalMb ?? 0))),
    });
  }

  /** Sends what is waiting; settles when the queue is empty or waits for a retry. */
  flush(): Promise<void> {
    this.seal();
    return this.pump();
  }

  /** Ends the session (session_end), sends what is waiting and stops collecting. */
  async shutdown(): Promise<void> {
    if (this.stopped) {
      return;
    }
    this.track("session_end");
    this.stop();
    await this.flush();
  }

  stats(): TelemetryStats {
    return { ...this.counts, queued: this.queue.events, pending: this.pending.length };
  }

  private stop(): void {
    this.stopped = true;
    this.sampler.stop();
    for (const t of this.timers) {
      clearInterval(t);
    }
    clearTimeout(this.retryTimer);
    for (const [target, type, fn] of this.listeners) {
      target.removeEventListener(type, fn);
    }
  }

  private heartbeat(): void {
    if (typeof document !== "undefined" && document.hidden) {
      return;
    }
    const frame = this.sampler.take();
    const heap = heapBytes();
    const metrics: Array<[string, number]> = [];
    if (heap) {
      metrics.push(["mem.heap", heap]);
    }
    if (frame?.displayHz) {
      metrics.push(["display.hz", frame.displayHz]);
    }
    this.record(
      "perf_heartbeat",
      {},
      {
        fps: frame?.fps,
        frameTimeMs: frame?.frameTimeMs,
        gpuTimeMs: frame?.gpuTimeMs,
        memoryUsedBytes: heap,
        metrics,
      },
    );
  }

  private add(bytes: Uint8Array, entries: number): void {
    const size = framedSize(bytes.length);
    if (
      this.pendingBytes + size > this.maxBytes ||
      this.pendingEntries + entries > LIMITS.maxDecodedEntries
    ) {
      this.seal();
    }
    this.pending.push(bytes);
    this.pendingBytes += size;
    this.pendingEntries += entries;
    if (this.pending.length >= this.maxEvents) {
      this.seal();
      void this.pump();
    }
  }

  /** Closes the batch being gathered and queues it with the device context. */
  private seal(): void {
    if (!this.pending.length) {
      return;
    }
    void this.queue.add({ events: this.pending, device: this.device, sealedAt: Date.now() });
    this.pending = [];
    this.pendingBytes = 0;
    this.pendingEntries = 0;
  }

  /** Sends queued batches oldest first, one at a time, until the queue is empty or a retry must wait. */
  private pump(): Promise<void> {
    this.pumping ??= (async () => {
      for (;;) {
        const batch = this.queue.batches[0];
        if (!batch || Date.now() < this.retryAt) {
          return;
        }
        const answer = await this.send(batch);
        const outcome = classify(answer.status, batch.events.length);
        if (outcome === "retry") {
          this.scheduleRetry(answer.status, answer.retryAfter);
          return;
        }
        this.attempt = 0;
        if (outcome === "split") {
          await this.queue.split(batch);
        } else {
          await this.queue.remove(batch);
          if (outcome === "delivered") {
            this.counts.delivered += batch.events.length;
          } else {
            this.dropped(
              batch.events.length,
              `ingest answered ${answer.status}${answer.detail ? `: ${answer.detail}` : ""}`,
            );
          }
        }
      }
    })().finally(() => {
      this.pumping = undefined;
    });
    return this.pumping;
  }

  private scheduleRetry(status: number, retryAfter: number | undefined): void {
    // Offline: no backoff to spend; the "online" event resumes sending.
    if (status === 0 && typeof navigator !== "undefined" && navigator.onLine === false) {
      this.retryAt = Number.POSITIVE_INFINITY;
      return;
    }
    const delay = retryDelayMs(this.attempt++, retryAfter, this.backoff);
    this.retryAt = Date.now() + delay;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      this.retryAt = 0;
      void this.pump();
    }, delay);
  }

  private async send(batch: Batch): Promise<{ status: number; retryAfter?: number; detail?: string }> {
    const raw = encodeBatch(batch.events, batch.device);
    const compress = this.opts.compress !== false && typeof CompressionStream !== "undefined";
    try {
      const body = compress ? await gzip(raw) : raw;
      // Bounded: a request that hangs (a proxy holding the connection) would otherwise stall the queue.
      // AbortController rather than AbortSignal.timeout, which browsers before 2022 lack.
      const abort = new AbortController();
      const timer = setTimeout(() => abort.abort(), this.opts.requestTimeoutMs ?? 30_000);
      const res = await this.fetchFn(this.url, {
        ...this.request(body, compress, false),
        signal: abort.signal,
      }).finally(() => clearTimeout(timer));
      const answer = { status: res.status, retryAfter: parseRetryAfter(res.headers.get("retry-after")) };
      if (classify(res.status, batch.events.length) === "drop") {
        const problem = (await res.json().catch(() => ({}))) as { detail?: string };
        return { ...answer, detail: problem.detail };
      }
      return answer;
    } catch {
      return { status: 0 };
    }
  }

  private request(body: Uint8Array, gzipped: boolean, keepalive: boolean): RequestInit {
    const headers: Record<string, string> = {
      "Content-Type": "application/x-protobuf",
      "X-API-Key": this.opts.apiKey,
      "X-SDK-Version": `web/${SDK_VERSION}`,
    };
    if (gzipped) {
      headers["Content-Encoding"] = "gzip";
    }
    return { method: "POST", headers, body: body as BodyInit, keepalive, credentials: "omit" };
  }

  private dropped(events: number, why: string): void {
    this.counts.dropped += events;
    console.warn(`${PREFIX} ${events} event(s) dropped: ${why}`);
  }

  private on(target: EventTarget | undefined, type: string, fn: EventListener): void {
    if (target) {
      target.addEventListener(type, fn);
      this.listeners.push([target, type, fn]);
    }
  }

  private listen(): void {
    const win = typeof window !== "undefined" ? window : undefined;
    this.on(win, "online", () => {
      this.retryAt = 0;
      this.attempt = 0;
      void this.pump();
    });
    this.on(win, "pagehide", (e) => this.pageHide((e as PageTransitionEvent).persisted));
    this.on(typeof document !== "undefined" ? document : undefined, "visibilitychange", () => {
      if (document.visibilityState === "hidden") {
        void this.flush();
      }
    });
  }

  /**
   * The page is going away: what is undelivered leaves now as plain keepalive requests (compression is
   * asynchronous and might not finish), oldest first, within the browser's keepalive budget. The
   * batches stay queued until answered: if this page never hears back, the next one sends them again
   * and ingest deduplicates the identical batch.
   */
  private pageHide(persisted: boolean): void {
    if (!persisted) {
      this.track("session_end");
    }
    this.seal();
    let budget = KEEPALIVE_BUDGET;
    for (const batch of this.queue.batches) {
      const raw = encodeBatch(batch.events, batch.device);
      if (raw.length > budget) {
        break;
      }
      budget -= raw.length;
      this.fetchFn(this.url, this.request(raw, false, true)).then(
        (res) => {
          if (res.ok) {
            this.counts.delivered += batch.events.length;
            void this.queue.remove(batch);
          }
        },
        () => {},
      );
    }
  }
}
