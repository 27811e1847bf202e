import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";
import { DASHBOARD_CSS, DASHBOARD_JS, SQL_JS } from "../../assets/bundle.gen.js";
import { SCRIPT_PATH, SQL_SCRIPT_PATH, STYLE_PATH } from "../../dashboard.js";

// The dashboard bundle (and the SQL page's, imported by it on that page), at URLs that carry its hash: cached for good, and a new build gets a new URL.
// Public (no session): it holds code, no data. Any other /assets path falls through to the 404 page.
const IMMUTABLE = "public, max-age=31536000, immutable";

export function register(app: Hono<AppEnv>) {
  app.get(SCRIPT_PATH, (c) =>
    c.body(DASHBOARD_JS, 200, {
      "Content-Type": "text/javascript; charset=utf-8",
      "Cache-Control": IMMUTABLE,
    }),
  );
  app.get(SQL_SCRIPT_PATH, (c) =>
    c.body(SQL_JS, 200, { "Content-Type": "text/javascript; charset=utf-8", "Cache-Control": IMMUTABLE }),
  );
  app.get(STYLE_PATH, (c) =>
    c.body(DASHBOARD_CSS, 200, { "Content-Type": "text/css; charset=utf-8", "Cache-Control": IMMUTABLE }),
  );
}
