import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import type { ServiceAddress } from "./service.js";
import { ADDRESS_LINE } from "./service-process-line.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const SERVICE_PROCESS = fileURLToPath(new URL("./service-process.ts", import.meta.url));

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
 * The service runs in a child process (test/support/service-process.ts: chdb binds one data directory
 * per process, and the workers project's global setup holds one in this one). Test files run in
 * workers of their own, so the setup hands out the service's address over loopback
 * HTTP: GET /service starts it (once) and answers 202 while it starts, then its address (500 and the
 * error if it could not start).
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  let child: ChildProcess | undefined;
  let exited: Promise<void> | undefined;
  let state: { address?: ServiceAddress; error?: string } = {};
  const start = () => {
    const proc = spawn(process.execPath, ["--import", "tsx", SERVICE_PROCESS], {
      cwd: ROOT,
      stdio: ["pipe", "pipe", "inherit"],
    });
    child = proc;
    exited = new Promise((resolve) => proc.once("exit", () => resolve()));
    const lines = createInterface({ input: proc.stdout });
    lines.on("line", (line) => {
      if (line.startsWith(ADDRESS_LINE)) {
        state = { address: JSON.parse(line.slice(ADDRESS_LINE.length)) as ServiceAddress };
      } else {
        // wrangler's and the Workers' output, as a service started in the run's own process would show.
        process.stdout.write(`${line}\n`);
      }
    });
    proc.once("exit", (code, signal) => {
      if (!state.address) {
        state = {
          error: `the service process exited (${signal ?? code}) before serving; its output is above`,
        };
      }
    });
  };
  const server = createServer((req, res) => {
    if (req.method !== "GET" || req.url !== "/service") {
      res.writeHead(404).end();
      return;
    }
    if (!child) {
      start();
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
    if (child && child.exitCode === null) {
      child.kill("SIGTERM");
      await exited;
    }
  };
}
