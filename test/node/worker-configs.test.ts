import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { NO_LOCAL_KNOBS } from "../../workers/shared/config.js";
import { QUEUES } from "../../workers/shared/queues.js";

// The two Workers' wrangler configs against the code's one table of queues (workers/shared/queues.ts):
// the consumer of each queue, its max_retries and dead-letter queue, and the RateLimiter both bind.
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const api = unstable_readConfig({ config: `${ROOT}wrangler.toml` });
const ingest = unstable_readConfig({ config: `${ROOT}workers/ingest/wrangler.toml` });
const configs = { api, ingest };

type Consumer = {
  queue: string;
  max_retries?: number;
  max_batch_size?: number;
  max_batch_timeout?: number;
  dead_letter_queue?: string;
};
type DoBinding = { name: string; class_name: string; script_name?: string };

describe("the Workers' wrangler configs", () => {
  it("never set LOCAL_KNOBS: the test clock, injected faults and export segment sizes are the local stack's and the tests' alone", () => {
    const FILES = ["wrangler.toml", "workers/ingest/wrangler.toml", "scripts/local/router/wrangler.toml"];
    for (const [name, c] of Object.entries(configs)) {
      expect(Object.keys(c.vars ?? {}), name).not.toContain("LOCAL_KNOBS");
    }
    for (const file of FILES) {
      const text = readFileSync(`${ROOT}${file}`, "utf8");
      // Nor any knob under its own name (workers/shared/config.ts LocalKnobs), old or new.
      for (const knob of [
        "LOCAL_KNOBS",
        ...Object.keys(NO_LOCAL_KNOBS),
        "TEST_CLOCK",
        "ALERT_FAULT_THROW_AFTER",
        "ERASURE_FAULT_AFTER_STEPS",
        "EXPORT_SEGMENT",
        "EXPORT_FAULT_AT_SEGMENT",
        "EXPORT_PARQUET_MAX_ROWS",
      ]) {
        expect(text, `${file}: ${knob}`).not.toContain(knob);
      }
    }
  });

  it("declare each queue's consumer in the Worker the table names, with its max_retries and batching", () => {
    for (const spec of Object.values(QUEUES)) {
      const consumers = Object.entries(configs).flatMap(
        ([worker, c]) =>
          c.queues.consumers
            ?.filter((q: Consumer) => q.queue === spec.name)
            .map((q: Consumer) => ({ worker, q })) ?? [],
      );
      expect(
        consumers.map((c) => c.worker),
        spec.name,
      ).toEqual([spec.consumer]);
      expect(consumers[0]?.q.max_retries, spec.name).toBe(spec.maxRetries);
      expect(consumers[0]?.q.max_batch_size, spec.name).toBe(spec.maxBatchSize);
      expect(consumers[0]?.q.max_batch_timeout, spec.name).toBe(spec.maxBatchTimeoutSeconds);
    }
    const declared = [...(api.queues.consumers ?? []), ...(ingest.queues.consumers ?? [])].map(
      (q) => q.queue,
    );
    expect(declared.sort()).toEqual(
      Object.values(QUEUES)
        .map((q) => q.name)
        .sort(),
    );
  });

  it("dead-letter the events queue into the queue the ingest Worker parks", () => {
    const events = ingest.queues.consumers?.find((q: Consumer) => q.queue === QUEUES.events.name);
    expect(events?.dead_letter_queue).toBe(QUEUES.eventsDeadLetter.name);
  });

  it("dead-letter the jobs queue into its own dead-letter queue; the API Worker produces to the jobs queue", () => {
    const jobs = api.queues.consumers?.find((q: Consumer) => q.queue === QUEUES.jobs.name);
    expect(jobs?.dead_letter_queue).toBe(QUEUES.jobsDeadLetter.name);
    expect(api.queues.producers).toContainEqual(
      expect.objectContaining({ binding: "JOBS_QUEUE", queue: QUEUES.jobs.name }),
    );
  });

  it("dead-letter the erasures queue into its own dead-letter queue; the API Worker produces to the erasures queue", () => {
    const erasures = api.queues.consumers?.find((q: Consumer) => q.queue === QUEUES.erasures.name);
    expect(erasures?.dead_letter_queue).toBe(QUEUES.erasuresDeadLetter.name);
    expect(api.queues.producers).toContainEqual(
      expect.objectContaining({ binding: "ERASURES_QUEUE", queue: QUEUES.erasures.name }),
    );
  });

  it("have one RateLimiter: defined by the API Worker, bound by the ingest Worker by script_name", () => {
    const own = api.durable_objects.bindings.find((b: DoBinding) => b.name === "RATE_LIMITER");
    expect(own).toMatchObject({ class_name: "RateLimiter" });
    expect(own?.script_name).toBeUndefined();
    expect(
      api.migrations.flatMap((m: { new_sqlite_classes?: string[] }) => m.new_sqlite_classes ?? []),
    ).toContain("RateLimiter");
    const bound = ingest.durable_objects.bindings.find((b: DoBinding) => b.name === "RATE_LIMITER");
    expect(bound).toEqual({ name: "RATE_LIMITER", class_name: "RateLimiter", script_name: api.name });
    expect(ingest.migrations).toEqual([]);
  });

  it("have one KeyReplica: defined by the API Worker, bound by the ingest Worker by script_name", () => {
    const own = api.durable_objects.bindings.find((b: DoBinding) => b.name === "KEY_REPLICA");
    expect(own).toEqual({ name: "KEY_REPLICA", class_name: "KeyReplica" });
    expect(
      api.migrations.flatMap((m: { new_sqlite_classes?: string[] }) => m.new_sqlite_classes ?? []),
    ).toContain("KeyReplica");
    const bound = ingest.durable_objects.bindings.find((b: DoBinding) => b.name === "KEY_REPLICA");
    expect(bound).toEqual({ name: "KEY_REPLICA", class_name: "KeyReplica", script_name: api.name });
  });

  it("give the ingest Worker only what it uses: no pages, no cron, no API-only bindings", () => {
    expect(ingest.triggers.crons ?? []).toEqual([]);
    expect(ingest.r2_buckets.map((b: { binding: string }) => b.binding)).toEqual(["DEAD_LETTERS"]);
    expect(ingest.queues.producers?.map((p: { binding: string }) => p.binding).sort()).toEqual([
      "DEAD_LETTER_QUEUE",
      "EVENTS_QUEUE",
    ]);
    expect(Object.keys(ingest.vars).sort()).toEqual([
      "CLICKHOUSE_URL",
      "CLICKHOUSE_USER",
      "NEON_LOCAL_PROXY",
    ]);
  });
});
