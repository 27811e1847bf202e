// The shared service in a process of its own (test/support/service-setup.ts starts it): chdb binds one
// data directory per process, and the workers project's global setup holds one in vitest's own.
// Prints `SERVICE <address as JSON>` once serving; stops it all on SIGTERM, or when its stdin closes
// (the run that started it has gone).
import { startService } from "./service.js";
import { ADDRESS_LINE } from "./service-process-line.js";

const service = await startService();
/**
 * How long closing may take before the process exits anyway: the run that started it waits for it to
 * exit. Once a Node 22 run's teardown waited minutes on it, its Postgres and wrangler gone but one of its
 * ports still listening and answering nothing (cause not found).
 */
const CLOSE_LIMIT_MS = 20_000;
let stopping = false;
const stop = async () => {
  if (stopping) {
    return;
  }
  stopping = true;
  setTimeout(() => {
    process.stderr.write(`the shared service did not close within ${CLOSE_LIMIT_MS} ms; exiting\n`);
    process.exit(0);
  }, CLOSE_LIMIT_MS).unref();
  await service.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
process.stdout.write(`${ADDRESS_LINE}${JSON.stringify(service.address)}\n`);
