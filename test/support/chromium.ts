// The Chromium the browser tests drive, and how they launch it. playwright-core downloads no browser of
// its own: CHROMIUM_PATH when set, else Debian's /usr/bin/chromium when installed, else the one shipped
// inside the @sparticuz/chromium npm package, so `npm ci && npm test` needs nothing from apt. The
// packaged one is extracted (to /tmp/chromium) once per run by the node project's global setup, before
// any test file starts: test files run in parallel and would otherwise race to write the same file.
import { type BrowserContext, chromium } from "playwright-core";
import { inject } from "vitest";

/**
 * Our own flags, not the package's `args`: those disable web security (same-origin policy, site
 * isolation), under which the pages' Content-Security-Policy checks would prove nothing.
 */
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** A headless Chromium with its own profile in `profileDir`; a clear error when none can start. */
export async function launchChromium(
  profileDir: string,
  options: Omit<
    NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>,
    "executablePath" | "args" | "headless"
  > = {},
): Promise<BrowserContext> {
  const { path, source } = inject("chromium");
  try {
    return await chromium.launchPersistentContext(profileDir, {
      // The locale a person's browser reports, whatever the machine's: under LANG=C the packaged
      // Chromium's default is "en-US@posix", which Intl refuses as a language tag.
      locale: "en-US",
      ...options,
      executablePath: path,
      headless: true,
      args: ARGS,
    });
  } catch (err) {
    throw new Error(
      `Chromium from ${source} (${path}) did not start. Set CHROMIUM_PATH to a working Chromium, or ` +
        "install one at /usr/bin/chromium; if the packaged one was extracted only in part (an " +
        `interrupted run), delete /tmp/chromium so the next run extracts it again.\n${(err as Error).message}`,
      { cause: err },
    );
  }
}
