import { expect } from "vitest";
import type { components } from "../../workers/api/web/client/api.gen.js";
import { type Auth, api } from "./http.js";
import { waitFor } from "./wait.js";

export type Erasure = components["schemas"]["Erasure"];

/**
 * How long a test waits for an erasure to end: well past what one takes on a loaded 2-core machine, and
 * short of the workers project's 60 s test timeout, so a stuck erasure fails with its last state.
 */
const ERASURE_DEADLINE_MS = 50_000;

/**
 * Erases `playerId` as a client that does not hold the request open: POST …/erasures with
 * `Prefer: respond-async` (202, the running erasure and its Location at once), then GET that Location
 * until the erasure has ended; its final record. How long the erasure takes decides only how long this
 * waits, never the answer (the default request's 20 s window would: 201 in time, 202 past it). `auth`:
 * a key, or the request's key, address and clock; `headers` go with every request (a user agent).
 */
export async function eraseAndWait(
  projectId: string,
  auth: string | Auth,
  playerId: string,
  headers: Record<string, string> = {},
): Promise<Erasure> {
  const as = typeof auth === "string" ? { key: auth } : auth;
  const res = await api(`/v1/projects/${projectId}/erasures`, as, {
    method: "POST",
    headers: { ...headers, "Content-Type": "application/json", Prefer: "respond-async" },
    body: JSON.stringify({ playerId }),
  });
  const text = await res.text();
  expect(res.status, text).toBe(202);
  const accepted = (JSON.parse(text) as { data: Erasure }).data;
  const location = res.headers.get("Location");
  expect(location).toBe(`/api/v1/projects/${projectId}/erasures/${accepted.id}`);
  return waitFor(
    async () => {
      const read = await api((location as string).replace(/^\/api/, ""), as, { headers });
      expect(read.status).toBe(200);
      return ((await read.json()) as { data: Erasure }).data;
    },
    (e) => e.status !== "running",
    { timeoutMs: ERASURE_DEADLINE_MS, intervalMs: 200, message: `erasure ${accepted.id} to end` },
  );
}
