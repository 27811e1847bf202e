import { inject } from "vitest";
import { type Service, type ServiceAddress, serviceAt } from "./service.js";
import { waitFor } from "./wait.js";

let shared: Promise<Service> | undefined;

/**
 * The run's one service (test/support/service-setup.ts), started by the first file that asks. Shared
 * by every browser test file: a file seeds its own studio in it and never closes it (close() does
 * nothing; the global setup stops it when the run ends).
 */
export function sharedService(): Promise<Service> {
  shared ??= (async () => {
    const answer = await waitFor(
      () => fetch(`${inject("serviceControl")}/service`),
      (res) => res.status !== 202,
      // Embedded Postgres, 34 migrations, chdb and wrangler dev: minutes when the machine is busy.
      { timeoutMs: 600_000, intervalMs: 500, message: "the shared service started" },
    );
    if (answer.status !== 200) {
      throw new Error(`the shared service did not start: ${await answer.text()}`);
    }
    return serviceAt((await answer.json()) as ServiceAddress, async () => {});
  })();
  return shared;
}
