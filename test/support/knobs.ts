import { env } from "cloudflare:test";
import type { LocalKnobs } from "../../workers/shared/config.js";

/**
 * The test config's LOCAL_KNOBS (vitest.config.ts: the test clock) with `extra` knobs on top, as an
 * override of `env` for one delivery or request: `{ ...env, ...knobs({ erasureFaultAfterSteps: 3 }) }`.
 */
export function knobs(extra: { [K in keyof LocalKnobs]?: unknown }): { LOCAL_KNOBS: string } {
  const base: unknown = JSON.parse(String(Reflect.get(env, "LOCAL_KNOBS") ?? "{}"));
  return { LOCAL_KNOBS: JSON.stringify({ ...(base as object), ...extra }) };
}
