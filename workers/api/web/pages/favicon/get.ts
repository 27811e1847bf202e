import type { Hono } from "hono";
import type { AppEnv } from "../../../context.js";

// The site's icon: an SVG the layout links, and /favicon.ico for browsers and tools that ask for it
// regardless (a 32x32 PNG inside an ICO container). Public and cached for a day: they hold no data, and
// without these routes every page's favicon request was answered with a redirect to sign-in.
const CACHE = "public, max-age=86400";

/** Three bars on the header's dark background: the product's charts at icon size. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1b1f24"/><path fill="#4fa3ff" d="M7 18h5v8H7zM14 11h5v15h-5zM21 6h5v20h-5z"/></svg>';

/** The same drawing rasterised: an ICO header and directory entry, then the PNG. */
const FAVICON_ICO = Uint8Array.from(
  atob(
    "AAABAAEAICAAAAEAIACXAAAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAAF5JREFUeNrt18ENABAMheHu4eBiH0MalAGQIKXE36TXvu/YJ9IZ50PWXBkZ7dApzKnwJuJ0eIX4G7DjcEy52i4CAIAdIQAAAFADrIYAAADgLQBf8RUA82p2RTm1qucFgvt6eJ/hrMwAAAAASUVORK5CYII=",
  ),
  (ch) => ch.charCodeAt(0),
);

export function register(app: Hono<AppEnv>) {
  app.get("/favicon.svg", (c) =>
    c.body(FAVICON_SVG, 200, { "Content-Type": "image/svg+xml", "Cache-Control": CACHE }),
  );
  app.get("/favicon.ico", (c) =>
    c.body(FAVICON_ICO, 200, { "Content-Type": "image/x-icon", "Cache-Control": CACHE }),
  );
}
