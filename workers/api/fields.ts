import { z } from "@hono/zod-openapi";

// A lone surrogate cannot be encoded as UTF-8: the driver would silently store U+FFFD instead.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Length in characters (Unicode code points), as the spec and JSON Schema's maxLength count them. */
export function charCount(s: string): number {
  let n = 0;
  for (const _ of s) {
    n++;
  }
  return n;
}

/** Whether Postgres (text or jsonb) stores `s` exactly as given. */
export function isStorable(s: string): boolean {
  return !s.includes("\0") && !LONE_SURROGATE.test(s);
}

/** Why `s` is not storable text of 1 (or 0) to `max` characters, or null if it is. */
export function textProblem(s: string, max: number, allowEmpty = false): string | null {
  if (!allowEmpty && s.length === 0) {
    return "must not be empty";
  }
  // Postgres text cannot hold U+0000.
  if (!isStorable(s)) {
    return "must be valid Unicode without U+0000";
  }
  if (s.length > max && charCount(s) > max) {
    return `must be at most ${max} characters`;
  }
  return null;
}

/** A string field of 1 to `max` characters that Postgres stores unchanged. */
export function text(max: number, opts: { allowEmpty?: boolean; trim?: boolean } = {}) {
  return (opts.trim ? z.string().trim() : z.string())
    .superRefine((s, ctx) => {
      const problem = textProblem(s, max, opts.allowEmpty);
      if (problem) {
        ctx.addIssue({ code: "custom", message: problem });
      }
    })
    .openapi({ minLength: opts.allowEmpty ? 0 : 1, maxLength: max });
}

/**
 * Plain decimal notation, the only text taken as a number: Number() alone would also take "", " 1 ",
 * "0x10" and "Infinity".
 */
export const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

const numericDoc = [{ type: "number" as const }, { type: "string" as const, pattern: DECIMAL.source }];

/** The document's schema of a nullable numberOrNumericString: number, numeric string or null. */
export const nullableNumericDoc = {
  type: ["number", "string", "null"] as ["number", "string", "null"],
  anyOf: [...numericDoc, { type: "null" as const }],
};

/**
 * A JSON number, or the same number written as a JSON string ("16.6"): clients that collect values
 * as command-line text (the Framedash CLI) send them so. Any other string is refused with `rule`.
 */
export function numberOrNumericString(rule: string) {
  return z
    .preprocess((v) => (typeof v === "string" && DECIMAL.test(v) ? Number(v) : v), z.number({ error: rule }))
    .openapi({ type: ["number", "string"], anyOf: numericDoc, description: rule });
}

/** The record timestamps as the interface spells them. */
export function isoTimestamps(row: { createdAt: Date; updatedAt: Date }) {
  return { createdAt: row.createdAt.toISOString(), updatedAt: row.updatedAt.toISOString() };
}
