import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { TestProject } from "vitest/node";
import { type Service, type ServiceAddress, startService } from "./service.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** Where a test file asks for the run's one service (test/support/shared-service.ts). */
    serviceControl: string;
  }
}

/**
 * The node project's global setup: one service (embedded Postgres migrated, chdb, the mail catcher,
 * `wrangler dev` with both Workers) for every browser test file of the run, started by the first file
 * that asks for it and stopped when the run ends. A run without a browser file starts none. Each file
 * seeds its own studio, project and people in it, so files stay independent of each other and of order.
 *
 * Test files run in workers of their own, so the setup hands out the service's address over loopback
 * HTTP: GET /service starts it (once) and answers 202 while it starts, then its address (500 and the
 * error if it could not start).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let starting: Promise<Service & { address: ServiceAddress }> | undefined;
  let state: { address?: ServiceAddress; error?: string } = {};
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url !== "/service") {
      res.writeHead(404).end();
      return;
    }
    if (!starting) {
      starting = startService().then(
        (service) => {
          state = { address: service.address };
          return service;
        },
        (err: unknown) => {
          state = { error: err instanceof Error ? (err.stack ?? err.message) : String(err) };
          throw err;
        },
      );
      // Its failure is answered to the files (500), not left unhandled in the runner's process.
      starting.catch(() => {});
    }
    // 202 while it starts (minutes on a loaded machine: the file polls rather than hold a request open).
    if (state.address) {
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(state.address));
    } else if (state.error) {
      res.writeHead(500, { "Content-Type": "text/plain" }).end(state.error);
    } else {
      res.writeHead(202).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("serviceControl", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const service = await starting?.catch(() => undefined);
    await service?.close();
  };
}
