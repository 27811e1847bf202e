import { Hono } from "hono";
import type { AppEnv } from "../../context.js";

// GET /api/health: liveness for uptime monitors and load balancers, public by design. It answers 200
// from the Worker alone, checking no dependency and reading no credential (a key or cookie sent along
// is ignored), so it names no studio, version, host or secret and costs no storage call. Whether the
// dependencies answer is the operator's readiness view, GET /api/operator/health (routes/operator).
// Not in the Web API document, like the operator's routes: it is no client operation.
export const healthApp = new Hono<AppEnv>();

healthApp.get("/health", (c) => {
  c.header("Cache-Control", "no-store");
  c.header("X-Content-Type-Options", "nosniff");
  return c.json({ success: true as const, data: { status: "ok" as const } }, 200);
});
