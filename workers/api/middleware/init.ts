import { createMiddleware } from "hono/factory";
import { openClickHouse } from "../../shared/clickhouse.js";
import { configOf } from "../../shared/config.js";
import { rateLimitHeaders } from "../../shared/rate-limit.js";
import { requestNow, TEST_NOW_HEADER } from "../clock.js";
import type { AppEnv } from "../context.js";
import { openDb } from "../db.js";

/**
 * Reads the request's clock (clock.ts) and builds the per-request services into c.var and, on the way
 * out, stamps the rate-limit headers.
 */
export const init = createMiddleware<AppEnv>(async (c, next) => {
  c.set("now", requestNow(c.env, c.req.header(TEST_NOW_HEADER)));
  const config = configOf(c.env);
  const { db, close } = openDb(config);
  c.set("config", config);
  c.set("db", db);
  c.set("ch", openClickHouse(config));
  try {
    await next();
  } finally {
    c.executionCtx.waitUntil(close().catch(() => {}));
  }
  const rl = c.get("rateLimit");
  if (rl) {
    for (const [name, value] of Object.entries(rateLimitHeaders(rl))) {
      c.res.headers.set(name, value);
    }
  }
});
