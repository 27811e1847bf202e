import { createMiddleware } from "hono/factory";
import { ApiError } from "../../shared/errors.js";
import type { AppEnv } from "../context.js";

const tooLarge = (maxBytes: number) =>
  new ApiError("PAYLOAD_TOO_LARGE", `body: at most ${maxBytes} bytes`, { extensions: { field: "body" } });

/** The stream's bytes, or null as soon as more than `maxBytes` arrived: an oversized body is never held. */
async function readUpTo(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
): Promise<Uint8Array | null> {
  if (!body) {
    return new Uint8Array();
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      return null;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
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
    const bytes = await readUpTo(c.req.raw.body, maxBytes);
    if (!bytes) {
      throw tooLarge(maxBytes);
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
