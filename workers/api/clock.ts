// The request's clock. Every route and domain function whose answer depends on the time (windows,
// expiries, rolling days, cooldowns) takes its `now` from here, read once per request by the init
// middleware (c.get("now")); scheduled() and the queue consumers take theirs once per invocation.
// Timing measurements (how long something took) keep using Date.now().
//
// Tests set the clock with the X-Test-Now header (milliseconds since the epoch). The header is honoured
// only under the local knob testClock (LOCAL_KNOBS, workers/shared/config.ts), which only the test
// configuration sets (vitest.config.ts): no wrangler config declares LOCAL_KNOBS, so in production the
// header is ignored whatever a client sends.
import { localKnobsOf } from "../shared/config.js";
import { ApiError } from "../shared/errors.js";

export const TEST_NOW_HEADER = "X-Test-Now";

/** The request's now in ms: the real time, or X-Test-Now when the Worker runs under the test clock. */
export function requestNow(env: object, header: string | undefined, real = Date.now()): number {
  if (!localKnobsOf(env).testClock || header === undefined) {
    return real;
  }
  const ms = Number(header);
  if (!/^\d{1,15}$/.test(header) || !Number.isSafeInteger(ms)) {
    throw new ApiError(
      "BAD_REQUEST",
      `${TEST_NOW_HEADER} must be a whole number of milliseconds since the epoch.`,
    );
  }
  return ms;
}
