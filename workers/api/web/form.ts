import type { Context } from "hono";
import type { AppEnv } from "../context.js";

/** Forms on these pages are a few short fields; anything larger is not one of ours. */
export const FORM_MAX_BYTES = 16 * 1024;

/**
 * The urlencoded body of a page form as single values (a repeated field keeps its first value), or
 * null when the request is not such a form or is too large.
 */
export async function readForm<E extends AppEnv>(c: Context<E>): Promise<Record<string, string> | null> {
  const type = c.req.header("content-type") ?? "";
  if (!type.toLowerCase().startsWith("application/x-www-form-urlencoded")) {
    return null;
  }
  const declared = Number(c.req.header("content-length") ?? "0");
  if (declared > FORM_MAX_BYTES) {
    return null;
  }
  // Decoded by hand: workerd warns when .text() reads a body whose type is not text/*.
  const text = new TextDecoder().decode(await c.req.arrayBuffer());
  if (text.length > FORM_MAX_BYTES) {
    return null;
  }
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    if (!Object.hasOwn(out, k)) {
      out[k] = v;
    }
  }
  return out;
}
