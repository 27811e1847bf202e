import { expect } from "vitest";
import { BASE } from "./harness.js";
import { workerFetch } from "./worker-fetch.js";

/** `now`: the request's clock in ms (X-Test-Now, honoured under the test config's local knob testClock only). */
export type Auth = { key?: string; token?: string; ip?: string; now?: number };

/** A Web API request through the Worker, as a client would send it (at `auth.now`, if set). */
export function api(path: string, auth: Auth = {}, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (auth.key) {
    headers.set("X-API-Key", auth.key);
  }
  if (auth.token) {
    headers.set("Authorization", `Bearer ${auth.token}`);
  }
  if (auth.ip) {
    headers.set("CF-Connecting-IP", auth.ip);
  }
  if (auth.now !== undefined) {
    headers.set("X-Test-Now", String(auth.now));
  }
  return workerFetch(`${BASE}/api${path}`, { ...init, headers, redirect: "manual" });
}

export type IngestOptions = {
  gzip?: boolean;
  headers?: Record<string, string | null>;
  /** The app host's route (default) or the ingest host's path the SDKs post to by default. */
  path?: "/api/v1/events" | "/v1/events";
};

/** POST /api/v1/events (or /v1/events) with the headers an SDK sends; null leaves a header out. */
export function ingest(body: Uint8Array, key: string | null, opts: IngestOptions = {}): Promise<Response> {
  const headers = new Headers({
    "Content-Type": "application/x-protobuf",
    "Content-Length": String(body.byteLength),
    "X-SDK-Version": "unity-1.4.2",
  });
  if (key !== null) {
    headers.set("X-API-Key", key);
  }
  if (opts.gzip) {
    headers.set("Content-Encoding", "gzip");
  }
  for (const [name, value] of Object.entries(opts.headers ?? {})) {
    if (value === null) {
      headers.delete(name);
    } else {
      headers.set(name, value);
    }
  }
  return workerFetch(`${BASE}${opts.path ?? "/api/v1/events"}`, { method: "POST", body, headers });
}

export async function problemOf(res: Response) {
  expect(res.headers.get("content-type")).toBe("application/problem+json");
  const body = (await res.json()) as Record<string, unknown>;
  expect(body.success).toBe(false);
  expect(body.status).toBe(res.status);
  expect(body.error).toBe(body.detail);
  return body as { status: number; detail: string; error_category: string; retryable: boolean } & Record<
    string,
    unknown
  >;
}
