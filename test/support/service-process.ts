// The shared service in a process of its own (test/support/service-setup.ts starts it): chdb binds one
// data directory per process, and the workers project's global setup holds one in vitest's own.
// Prints `SERVICE <address as JSON>` once serving; stops it all on SIGTERM, or when its stdin closes
// (the run that started it has gone).
import { startService } from "./service.js";
import { ADDRESS_LINE } from "./service-process-line.js";

const service = await startService();
let stopping = false;
const stop = async () => {
  if (stopping) {
    return;
  }
  stopping = true;
  await service.close();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.stdin.on("end", stop);
process.stdin.resume();
process.stdout.write(`${ADDRESS_LINE}${JSON.stringify(service.address)}\n`);
