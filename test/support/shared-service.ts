import { inject } from "vitest";
import { type Service, type ServiceAddress, serviceAt } from "./service.js";

let shared: Promise<Service> | undefined;

/**
 * The run's one service (test/support/service-setup.ts), started by the first file that asks. Shared
 * by every browser test file: a file seeds its own studio in it and never closes it (close() does
 * nothing; the global setup stops it when the run ends).
 */
export function sharedService(): Promise<Service> {
  shared ??= (async () => {
    const res = await fetch(`${inject("serviceControl")}/service`);
    if (!res.ok) {
      throw new Error(`the shared service did not start: ${await res.text()}`);
    }
    return serviceAt((await res.json()) as ServiceAddress, async () => {});
  })();
  return shared;
}
