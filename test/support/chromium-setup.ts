import { existsSync } from "node:fs";
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
  return { path: await packaged.executablePath(), source: "the @sparticuz/chromium package" };
}

/** The node project's global setup: settles which Chromium the browser tests launch (test/support/chromium.ts). */
export default async function setup(project: TestProject): Promise<void> {
  project.provide("chromium", await resolveChromium());
}
