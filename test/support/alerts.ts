import { createScheduledController, env } from "cloudflare:test";
import { expect, inject } from "vitest";
import worker from "../../workers/api/index.js";
import { type Auth, api } from "./http.js";
import { waitFor } from "./wait.js";

export async function json<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return (JSON.parse(text) as { data: T }).data;
}

export function send(path: string, auth: Auth, method: string, body?: unknown): Promise<Response> {
  return api(path, auth, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** One cron run at `now` (ms; the run's clock: windows, cooldowns), through the Worker's own scheduled handler. */
export async function runScheduled(now = Date.now()): Promise<void> {
  const controller = createScheduledController({ scheduledTime: now, cron: "*/5 * * * *" });
  await worker.scheduled(controller, env);
}

export const hookUrl = (path: string) => `${inject("hookUrl")}${path}`;

export type Received = { path: string; headers: Record<string, string>; body: string; at: number };

export async function received(path: string): Promise<Received[]> {
  const res = await fetch(`${inject("hookUrl")}/received?path=${encodeURIComponent(path)}`);
  return (await res.json()) as Received[];
}

/** Waits until the receiver has at least `n` deliveries on `path` (the queue consumer runs on its own). */
export function waitForDeliveries(path: string, n: number, timeoutMs = 20_000): Promise<Received[]> {
  return waitFor(
    () => received(path),
    (got) => got.length >= n,
    { timeoutMs, intervalMs: 200, message: `${n} deliveries on ${path}` },
  );
}
