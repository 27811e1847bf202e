import type { ClickHouseClient } from "@clickhouse/client-web";
import type { ErasureStepOutcome } from "../../../schema/pg/columns.js";
import { forgetAnchorHours } from "../analytics/funnel-anchors.js";
import { forgetSessionMedianDays } from "../analytics/session-medians.js";
import { dropKeys } from "./keys.js";
import { REBUILT_ROLLUPS, rebuildRollups } from "./rollups.js";
import { type Bound, countRows, deleteRows, ERASURE_STEPS, type ErasureStep } from "./steps.js";

export type StepOutcome = ErasureStepOutcome;

/** Events that arrive while a step deletes are caught by another pass, up to this many. */
const PASSES = 3;

/**
 * Runs the steps of one player's erasure that `done` does not hold yet (a retry resumes after the last
 * recorded one): count, delete, count again, each step recorded through `onStep` as it ends. The rows
 * removed are counted, not assumed, and a step that still finds rows after its passes fails the erasure
 * loudly. A step whose first count is 0 deletes nothing. Then, once, the day-keyed rollups are rebuilt
 * for the player's days from the events left (rollups.ts): `bound` was read before the first delete
 * (and kept with the erasure), so a retry after the events are gone still knows the sessions and days.
 */
export async function erasePlayer(
  ch: ClickHouseClient,
  bound: Bound,
  done: StepOutcome[],
  onStep: (done: StepOutcome[]) => Promise<void>,
  steps: ErasureStep[] = ERASURE_STEPS,
): Promise<StepOutcome[]> {
  // The rollups are rebuilt (and reported) again by every attempt that gets that far: a retry after
  // the last rebuild (the final update failed) reports them once, not twice.
  const rebuilt = new Set(REBUILT_ROLLUPS);
  const out = done.filter((s) => !rebuilt.has(s.table));
  const recorded = new Set(out.map((s) => s.table));
  for (const step of steps) {
    if (recorded.has(step.table)) {
      continue;
    }
    let removed = 0;
    let remaining = await countRows(ch, step, bound);
    for (let pass = 0; remaining > 0 && pass < PASSES; pass++) {
      await deleteRows(ch, step, bound);
      const after = await countRows(ch, step, bound);
      removed += remaining - after;
      remaining = after;
    }
    if (remaining > 0) {
      throw new Error(`${step.table}: ${remaining} rows of the player remain after ${PASSES} passes`);
    }
    out.push({ table: step.table, rowsRemoved: removed });
    await onStep(out);
  }
  // The rollups without a player key, all in one step: a retry rebuilds them all again, which replaces
  // the same rows (a rebuild deletes the days' rows before inserting them), so nothing is counted twice.
  out.push(...(await rebuildRollups(ch, bound)));
  // Funnels' stored anchor hours of those days (analytics/funnel-anchors.ts): deleted, stored again later.
  await forgetAnchorHours(ch, bound.project, bound.days);
  // The closed days' stored session medians of the player's days are deleted, not rebuilt: the
  // session-medians job stores them again from the rebuilt session values.
  await forgetSessionMedianDays(ch, bound.project, bound.days);
  // The staged keys served their rebuild (a retry past this point finds none and has nothing to redo).
  if (bound.erasure !== undefined) {
    await dropKeys(ch, bound.project, bound.erasure);
  }
  await onStep(out);
  return out;
}
