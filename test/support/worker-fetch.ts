import { createExecutionContext, env } from "cloudflare:test";
import host, { type HostEnv } from "./app-host.js";

/**
 * A request to the Workers, handed to the tests' main Worker (app-host.ts: Cloudflare's routes in front of
 * the API and ingest Workers) as SELF.fetch() would hand it, but called in this isolate. SELF.fetch() gets
 * slower with every request one test file's runtime has served (workers-sdk#15446, measured here: /api/health
 * from 3 ms to 128 ms after 600 requests; the security table's last tests took seconds each), which made the
 * request-heavy files quadratic in their requests; the handler called directly stays flat. Its waitUntil
 * work is registered with the pool, which waits for it at the end of the test, as for SELF. The response is
 * the Worker's own: redirects are not followed (as `redirect: "manual"`).
 */
export function workerFetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
  // As an incoming request, with no `cf` object: nothing the Workers do reads one.
  const request = new Request(input, init) as Request<unknown, IncomingRequestCfProperties>;
  return Promise.resolve(host.fetch(request, env as HostEnv, createExecutionContext()));
}
