import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { readCapped, TooLarge } from "../../shared/envelope.js";
import { ApiError } from "../../shared/errors.js";
import type { AppEnv } from "../context.js";

const tooLarge = (maxBytes: number) =>
  new ApiError("PAYLOAD_TOO_LARGE", `body: at most ${maxBytes} bytes`, { extensions: { field: "body" } });

/**
 * Refuses a body over `maxBytes` (413 naming `body`) before a validator buffers it whole: by
 * Content-Length when declared, else while streaming.
 */
/** The cap of a small JSON resource body (a profile, a rule, a channel). */
export const RESOURCE_BODY_BYTES = 64 * 1024;

export function bodyUpTo(maxBytes: number): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw tooLarge(maxBytes);
    },
  });
}

/**
 * Reads a multipart/form-data body of at most `maxBytes` and hands the parsed form to the route's
 * validator (through Hono's body cache). A declared Content-Length over the cap is refused before
 * reading; a body without one (chunked) is cut off once it passes the cap.
 */
export function boundedForm(maxBytes: number) {
  return createMiddleware<AppEnv>(async (c, next) => {
    const type = c.req.header("Content-Type") ?? "";
    if (!/^multipart\/form-data\s*;\s*boundary=/i.test(type)) {
      throw new ApiError("UNSUPPORTED_MEDIA_TYPE", "header.Content-Type: must be multipart/form-data", {
        extensions: { field: "header.Content-Type" },
      });
    }
    const declared = c.req.header("Content-Length");
    if (declared !== undefined && Number(declared) > maxBytes) {
      throw tooLarge(maxBytes);
    }
    let bytes: Uint8Array;
    try {
      bytes = await readCapped(c.req.raw.body, maxBytes);
    } catch (err) {
      throw err instanceof TooLarge ? tooLarge(maxBytes) : err;
    }
    try {
      c.req.bodyCache.formData = await new Response(bytes, { headers: { "Content-Type": type } }).formData();
    } catch {
      throw new ApiError("BAD_REQUEST", "body: malformed multipart/form-data", {
        extensions: { field: "body" },
      });
    }
    return next();
  });
}
