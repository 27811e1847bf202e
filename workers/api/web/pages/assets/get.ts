import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { DASHBOARD_CHUNKS, DASHBOARD_CSS, DASHBOARD_JS } from "../../assets/bundle.gen.js";
import { SCRIPT_PATH, STYLE_PATH } from "../../dashboard.js";

// The dashboard bundle and its chunks, at URLs that carry their hash: cached for good, and a new build gets
// a new URL.
// Public (no session): it holds code, no data. Any other /assets path falls through to the 404 page.
const IMMUTABLE = "public, max-age=31536000, immutable";

export function register(app: Hono<AppEnv>) {
  app.get(SCRIPT_PATH, (c) =>
    c.body(DASHBOARD_JS, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": IMMUTABLE,
    }),
  );
  // The entry's chunks (shared code, lazily loaded pages): content-hashed names, so immutable too.
  app.get("/assets/:chunk{chunk-[A-Za-z0-9_-]+\\.js}", async (c, next) => {
    const js = DASHBOARD_CHUNKS[c.req.param("chunk")];
    if (js === undefined) {
      // No such chunk: on to whatever answers an unknown path.
      return next();
    }
    return c.body(js, 200, { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": IMMUTABLE });
  });
  app.get(STYLE_PATH, (c) =>
    c.body(DASHBOARD_CSS, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": IMMUTABLE }),
  );
}
