import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import protobuf from "protobufjs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Telemetry, type TelemetryOptions } from "../src/client.js";
import { classify, parseRetryAfter, retryDelayMs } from "../src/retry.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const Batch = protobuf
  .parse(readFileSync(join(ROOT, "proto/telemetry/v1/telemetry.proto"), "utf8"), { keepCase: true })
  .root.lookupType("telemetry.v1.TelemetryBatch");

type Sent = { at: number; names: string[]; headers: Record<string, string>; gzip: boolean; bytes: number };

/** An ingest endpoint in a function: records each request decoded, answers what `answer` says. */
function endpoint(
  answer: (req: Sent, n: number) => Response | Error = () => new Response(null, { status: 202 }),
) {
  const requests: Sent[] = [];
  const fetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const headers = Object.fromEntries(Object.entries((init?.headers ?? {}) as Record<string, string>));
    const raw = new Uint8Array(init?.body as Uint8Array);
    const gzip = headers["Content-Encoding"] === "gzip";
    const decoded = Batch.toObject(Batch.decode(gzip ? gunzipSync(raw) : raw)) as {
      events: { event_name: string }[];
    };
    const req = {
      at: Date.now(),
      names: decoded.events.map((e) => e.event_name),
      headers,
      gzip,
      bytes: raw.length,
    };
    requests.push(req);
    const a = answer(req, requests.length);
    if (a instanceof Error) {
      throw a;
    }
    return a;
  };
  return { requests, fetch: fetch as typeof globalThis.fetch };
}

const clients: Telemetry[] = [];
function client(opts: Partial<TelemetryOptions> & { fetch: typeof fetch }): Telemetry {
  const t = new Telemetry({
    endpoint: "https://ingest.test",
    apiKey: "gta_test_key",
    buildId: "1.0.0",
    autoCollect: false,
    persist: false,
    flushIntervalMs: 60_000,
    retry: { baseMs: 5, maxMs: 20 },
    ...opts,
  });
  clients.push(t);
  return t;
}

async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
}

afterEach(async () => {
  vi.restoreAllMocks();
  for (const t of clients.splice(0)) {
    await t.shutdown();
  }
});

describe("answers policy", () => {
  it("classifies as the engine SDKs do", () => {
    expect([200, 202, 204].map((s) => classify(s, 5))).toEqual(["delivered", "delivered", "delivered"]);
    expect(classify(413, 2)).toBe("split");
    expect(classify(413, 1)).toBe("drop");
    expect([0, 429, 500, 503].map((s) => classify(s, 5))).toEqual(["retry", "retry", "retry", "retry"]);
    expect([301, 400, 401, 403, 404, 415].map((s) => classify(s, 5))).toEqual(Array(6).fill("drop"));
  });

  it("backs off exponentially with jitter, up to the ceiling, never before Retry-After", () => {
    const policy = { baseMs: 1000, maxMs: 60_000 };
    expect(retryDelayMs(0, undefined, policy, () => 1)).toBe(1000);
    expect(retryDelayMs(3, undefined, policy, () => 1)).toBe(8000);
    expect(retryDelayMs(3, undefined, policy, () => 0)).toBe(4000);
    expect(retryDelayMs(20, undefined, policy, () => 1)).toBe(60_000);
    expect(retryDelayMs(0, 30, policy, () => 1)).toBe(30_000);
  });

  it("reads Retry-After as seconds or a date", () => {
    expect(parseRetryAfter("7")).toBe(7);
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 0)).toBe(10);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter("999999")).toBe(3600);
  });
});

describe("a request that hangs", () => {
  it("is given up after requestTimeoutMs and the same batch is sent again", async () => {
    let n = 0;
    const requests: { n: number; aborted: boolean }[] = [];
    const fetch = (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
      n++;
      const seen = { n, aborted: false };
      requests.push(seen);
      if (n > 1) {
        return Promise.resolve(new Response(null, { status: 202 }));
      }
      // The first request never answers; only its signal ends it.
      return new Promise((_, reject) => {
        init?.signal?.addEventListener("abort", () => {
          seen.aborted = true;
          reject(init.signal?.reason);
        });
      });
    };
    const t = client({ fetch: fetch as typeof globalThis.fetch, requestTimeoutMs: 50 });
    t.track("stuck");
    await t.flush();
    await until(() => t.stats().delivered === 2, "the batch delivered on the second request");
    expect(requests).toEqual([
      { n: 1, aborted: true },
      { n: 2, aborted: false },
    ]);
    expect(t.stats()).toMatchObject({ dropped: 0, queued: 0 });
  });
});

describe("batching and delivery", () => {
  it("starts the session and batches by count, gzip'd, with the ingest headers", async () => {
    const server = endpoint();
    const t = client({ fetch: server.fetch, maxBatchEvents: 4 });
    for (let i = 0; i < 6; i++) {
      t.track(`e${i}`);
    }
    await until(() => server.requests.length === 1, "the first full batch");
    await t.flush();
    expect(server.requests.map((r) => r.names)).toEqual([
      ["session_start", "e0", "e1", "e2"],
      ["e3", "e4", "e5"],
    ]);
    expect(server.requests[0]?.headers).toMatchObject({
      "Content-Type": "application/x-protobuf",
      "Content-Encoding": "gzip",
      "X-API-Key": "gta_test_key",
      "X-SDK-Version": "web/0.1.0",
    });
    expect(t.stats()).toMatchObject({ tracked: 7, delivered: 7, queued: 0, pending: 0 });
  });

  it("batches by bytes", async () => {
    const server = endpoint();
    const t = client({ fetch: server.fetch, maxBatchBytes: 1024, compress: false });
    for (let i = 0; i < 10; i++) {
      t.track("big", { attributes: { text: "x".repeat(300) } });
    }
    await t.flush();
    expect(server.requests.length).toBeGreaterThan(3);
    expect(server.requests.every((r) => r.bytes <= 1024)).toBe(true);
    expect(server.requests.flatMap((r) => r.names).filter((n) => n === "big")).toHaveLength(10);
  });

  it("sends by interval", async () => {
    const server = endpoint();
    const t = client({ fetch: server.fetch, flushIntervalMs: 30 });
    t.track("tick");
    await until(() => server.requests.length === 1, "the interval's batch");
    expect(server.requests[0]?.names).toEqual(["session_start", "tick"]);
  });

  it("413 splits the batch in halves until each part fits; every event arrives once", async () => {
    const server = endpoint((req) => new Response(null, { status: req.names.length > 2 ? 413 : 202 }));
    const t = client({ fetch: server.fetch, maxBatchEvents: 100 });
    for (let i = 0; i < 9; i++) {
      t.track(`e${i}`);
    }
    await t.flush();
    const delivered = server.requests.filter((r) => r.names.length <= 2).flatMap((r) => r.names);
    expect(delivered).toEqual(["session_start", ...Array.from({ length: 9 }, (_, i) => `e${i}`)]);
    expect(server.requests[0]?.names).toHaveLength(10);
    expect(server.requests[1]?.names).toHaveLength(5);
    expect(t.stats()).toMatchObject({ delivered: 10, dropped: 0, queued: 0 });
  });

  it("413 for a single event drops it with a warning", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const server = endpoint(() => new Response(null, { status: 413 }));
    const t = client({ fetch: server.fetch });
    await t.flush();
    expect(server.requests).toHaveLength(1);
    expect(t.stats()).toMatchObject({ delivered: 0, dropped: 1, queued: 0 });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("ingest answered 413"));
  });

  it("429 waits for Retry-After, then delivers the same batch", async () => {
    const server = endpoint((_req, n) =>
      n === 1
        ? new Response(null, { status: 429, headers: { "Retry-After": "1" } })
        : new Response(null, { status: 202 }),
    );
    const t = client({ fetch: server.fetch });
    t.track("a");
    await t.flush();
    expect(server.requests).toHaveLength(1);
    await until(() => t.stats().delivered === 2, "the retry", 5000);
    const [first, second] = server.requests;
    expect(second?.names).toEqual(first?.names);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it("5xx and network errors retry with backoff until delivered", async () => {
    const server = endpoint((_req, n) =>
      n === 1
        ? new Response(null, { status: 503 })
        : n === 2
          ? new TypeError("network")
          : new Response(null, { status: 202 }),
    );
    const t = client({ fetch: server.fetch });
    t.track("a");
    await t.flush();
    await until(() => t.stats().delivered === 2, "delivery after two failures");
    expect(server.requests).toHaveLength(3);
    expect(new Set(server.requests.map((r) => r.names.join()))).toEqual(new Set(["session_start,a"]));
  });

  it("other 4xx drop the batch with the problem's detail in a warning, and sending goes on", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const server = endpoint((_req, n) =>
      n === 1
        ? Response.json({ detail: "events[0].event_name: required" }, { status: 400 })
        : new Response(null, { status: 202 }),
    );
    const t = client({ fetch: server.fetch, maxBatchEvents: 2 });
    t.track("a");
    t.track("b");
    await t.flush();
    expect(server.requests.map((r) => r.names)).toEqual([["session_start", "a"], ["b"]]);
    expect(t.stats()).toMatchObject({ delivered: 1, dropped: 2 });
    expect(warn).toHaveBeenCalledWith(expect.stringContaining("400: events[0].event_name: required"));
  });

  it("a sampled-out session sends nothing", async () => {
    const server = endpoint();
    const t = client({ fetch: server.fetch, sampleRate: 0 });
    t.track("a");
    await t.flush();
    expect(t.enabled).toBe(false);
    expect(server.requests).toHaveLength(0);
  });

  it("bounds the queue: the oldest batches go when it is full", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const server = endpoint(() => new Response(null, { status: 503 }));
    const t = client({
      fetch: server.fetch,
      maxBatchEvents: 5,
      maxQueuedEvents: 10,
      retry: { baseMs: 60_000 },
    });
    for (let i = 0; i < 19; i++) {
      t.track(`e${i}`);
    }
    await t.flush();
    expect(t.stats()).toMatchObject({ queued: 10, dropped: 10 });
  });
});

describe("device context", () => {
  it("goes once per batch (field 2); setDevice replaces only the fields it is given", async () => {
    const bodies: Uint8Array[] = [];
    const t = client({
      compress: false,
      fetch: (async (_u: unknown, init?: RequestInit) => {
        bodies.push(new Uint8Array(init?.body as Uint8Array));
        return new Response(null, { status: 202 });
      }) as typeof fetch,
    });
    t.setDevice({ gpu: "Test GPU", resolution: "1920x1080", memoryTotalMb: 8192 });
    t.setDevice({ resolution: "1280x720" });
    t.track("a");
    await t.flush();
    const batch = Batch.toObject(Batch.decode(bodies[0] as Uint8Array)) as {
      events: Record<string, unknown>[];
      device: Record<string, unknown>;
    };
    expect(batch.device).toEqual({ gpu: "Test GPU", resolution: "1280x720", memory_total_mb: 8192 });
    expect(batch.events.every((e) => !("device" in e))).toBe(true);
  });
});
