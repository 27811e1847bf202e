import type { Reporter, TestModule } from "vitest/node";

/** Ends the run with one plain line, `tests: N passed, N failed`, that any CI log reader understands. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of modules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === "passed") {
          passed++;
        } else if (state === "failed") {
          failed++;
        } else {
          skipped++;
        }
      }
    }
    const tail = skipped ? `, ${skipped} skipped` : "";
    process.stdout.write(`tests: ${passed} passed, ${failed} failed${tail}\n`);
  }
}
