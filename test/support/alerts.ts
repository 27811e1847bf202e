import { createScheduledController, env } from "cloudflare:test";
import { expect, inject } from "vitest";
import worker from "../../workers/api/index.js";
import { type Auth, api } from "./http.js";

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

/** One cron run, through the Worker's own scheduled handler. */
export async function runScheduled(): Promise<void> {
  const controller = createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" });
  await worker.scheduled(controller, env);
}

export const hookUrl = (path: string) => `${inject("hookUrl")}${path}`;

export type Received = { path: string; headers: Record<string, string>; body: string; at: number };

export async function received(path: string): Promise<Received[]> {
  const res = await fetch(`${inject("hookUrl")}/received?path=${encodeURIComponent(path)}`);
  return (await res.json()) as Received[];
}

/** Waits until the receiver has at least `n` deliveries on `path` (the queue consumer runs on its own). */
export async function waitForDeliveries(path: string, n: number, timeoutMs = 20_000): Promise<Received[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await received(path);
    if (got.length >= n || Date.now() > deadline) {
      return got;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
