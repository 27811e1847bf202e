import type { ClickHouseClient } from "@clickhouse/client-web";
import type { ErasureStepOutcome } from "../../../schema/pg/columns.js";
import { rebuildRollups } from "./rollups.js";
import { countRows, deleteRows, ERASURE_STEPS, type ErasureStep, playerSessions } from "./steps.js";

export type StepOutcome = ErasureStepOutcome;

/** Events that arrive while a step deletes are caught by another pass, up to this many. */
const PASSES = 3;

/**
 * Runs every step for one player: count, delete, count again. The rows removed are counted, not
 * assumed, and a step that still finds rows after its passes fails the erasure loudly.
 */
export async function erasePlayer(
  ch: ClickHouseClient,
  projectId: string,
  playerId: string,
  onStep: (done: StepOutcome[]) => Promise<void>,
  steps: ErasureStep[] = ERASURE_STEPS,
): Promise<StepOutcome[]> {
  const bound = await playerSessions(ch, projectId, playerId);
  // The day-keyed rollups first, while the events still tell which days the player touched: a retry
  // after a failure further on finds the same days (rollups.ts).
  await rebuildRollups(ch, bound);
  const done: StepOutcome[] = [];
  for (const step of steps) {
    let removed = 0;
    let remaining = await countRows(ch, step, bound);
    for (let pass = 0; remaining > 0 && pass < PASSES; pass++) {
      await deleteRows(ch, step, bound);
      const after = await countRows(ch, step, bound);
      removed += remaining - after;
      remaining = after;
    }
    done.push({ table: step.table, rowsRemoved: removed });
    await onStep(done);
    if (remaining > 0) {
      throw new Error(`${step.table}: ${remaining} rows of the player remain after ${PASSES} passes`);
    }
  }
  // Again, for events of the player that arrived while the steps ran; reported per rollup table.
  done.push(...(await rebuildRollups(ch, bound)));
  await onStep(done);
  return done;
}
