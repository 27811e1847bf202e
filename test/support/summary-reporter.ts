import type { Reporter, TestModule } from "vitest/node";

/** How many of the slowest test files the summary names. */
const SLOWEST = 20;

/**
 * Ends the run with the slowest test files (where the suite's minutes go) and then one plain line,
 * `tests: N passed, N failed`, that any CI log reader understands; that line stays the last.
 */
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
    process.stdout.write(slowestFiles(modules, SLOWEST));
    const tail = skipped ? `, ${skipped} skipped` : "";
    process.stdout.write(`tests: ${passed} passed, ${failed} failed${tail}\n`);
  }
}

/**
 * The `count` slowest files, each with its seconds: importing the file (collect), its setup files, and
 * its tests and hooks (a beforeAll that seeds data counts here). Empty when no file ran.
 */
export function slowestFiles(modules: ReadonlyArray<TestModule>, count: number): string {
  const rows = modules
    .map((m) => {
      const d = m.diagnostic();
      const ms = d.collectDuration + d.setupDuration + d.duration;
      return {
        ms,
        name: `${m.project.name}: ${m.relativeModuleId}`,
        tests: [...m.children.allTests()].length,
      };
    })
    .filter((r) => r.ms > 0)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, count);
  if (!rows.length) {
    return "";
  }
  const lines = rows.map(
    (r) => `${(r.ms / 1000).toFixed(1).padStart(7)} s  ${String(r.tests).padStart(4)}  ${r.name}`,
  );
  return `slowest ${rows.length} files (seconds, tests, file):\n${lines.join("\n")}\n`;
}
