import { ApiError } from "../../../shared/errors.js";
import { DAY_MS, windowOf } from "../../window.js";
import { MAX_EXPORT_DAYS } from "./schema.js";

function bad(field: string, rule: string): ApiError {
  return new ApiError("BAD_REQUEST", `json.${field}: ${rule}`, { extensions: { field: `json.${field}` } });
}

/** `days` (UTC calendar days ending today) or `from`/`to`; exactly one of the two forms. */
export function exportRange(body: { days?: number; from?: string; to?: string }, now = new Date()) {
  const explicit = body.from !== undefined || body.to !== undefined;
  if (body.days !== undefined && explicit) {
    throw bad("days", "give either days or from/to, not both");
  }
  if (body.days !== undefined) {
    const w = windowOf(body.days, now.getTime());
    return { from: new Date(w.fromMs), to: new Date(w.toMs) };
  }
  if (body.from === undefined || body.to === undefined) {
    throw bad(
      body.from === undefined ? "from" : "to",
      "required unless days is given (from and to go together)",
    );
  }
  const from = new Date(body.from);
  const to = new Date(body.to);
  if (to <= from) {
    throw bad("to", "must be after from");
  }
  if (to.getTime() - from.getTime() > MAX_EXPORT_DAYS * DAY_MS) {
    throw bad("to", `the range may span at most ${MAX_EXPORT_DAYS} days`);
  }
  return { from, to };
}
