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
 * HTTP: GET /service starts it (once) and answers its address.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let starting: Promise<Service & { address: ServiceAddress }> | undefined;
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url !== "/service") {
      res.writeHead(404).end();
      return;
    }
    starting ??= startService();
    starting.then(
      (service) => {
        res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify(service.address));
      },
      (err: unknown) => {
        res
          .writeHead(500, { "Content-Type": "text/plain" })
          .end(err instanceof Error ? err.stack : String(err));
      },
    );
  });
  // Starting the stack can take minutes on a loaded machine: no server-side timeout on the answer.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  project.provide("serviceControl", `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const service = await starting?.catch(() => undefined);
    await service?.close();
  };
}
