import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import type { TestProject } from "vitest/node";

const SYSTEM_CHROMIUM = "/usr/bin/chromium";

declare module "vitest" {
  export interface ProvidedContext {
    /** The Chromium the browser tests launch, and where it came from (for the error when it fails). */
    chromium: { path: string; source: string };
  }
}

/** CHROMIUM_PATH, else the system's Chromium, else the one inside @sparticuz/chromium (extracted here). */
export async function resolveChromium(): Promise<{ path: string; source: string }> {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    return { path: fromEnv, source: "CHROMIUM_PATH" };
  }
  if (existsSync(SYSTEM_CHROMIUM)) {
    return { path: SYSTEM_CHROMIUM, source: "the system's Chromium" };
  }
  const packaged = (await import("@sparticuz/chromium")).default;
  const source = "the @sparticuz/chromium package";
  const path = await packaged.executablePath();
  if (starts(path)) {
    return { path, source };
  }
  // The package extracts once into /tmp and reuses what it finds there: a run stopped mid-extraction (or two
  // extracting at once) leaves a truncated binary that crashes on every launch. Extract it again.
  rmSync(path, { force: true });
  const again = await packaged.executablePath();
  if (!starts(again)) {
    throw new Error(`the Chromium of ${source} at ${again} does not start (${source}); set CHROMIUM_PATH`);
  }
  return { path: again, source };
}

/** Whether the binary answers --version: a truncated extraction segfaults instead. */
function starts(path: string): boolean {
  const r = spawnSync(path, ["--version"], { timeout: 30_000, stdio: "ignore" });
  return r.status === 0;
}

/** The node project's global setup: settles which Chromium the browser tests launch (test/support/chromium.ts). */
export default async function setup(project: TestProject): Promise<void> {
  project.provide("chromium", await resolveChromium());
}
