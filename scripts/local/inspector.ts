import WebSocket from "ws";

/** How often the Network domain is switched off again (wrangler re-enables it when it reconnects). */
const EVERY_MS = 10_000;

/**
 * Keeps `wrangler dev`'s inspector from reporting every chunk of every subrequest's response body.
 *
 * wrangler 4.86's inspector proxy (InspectorProxyWorker) sends `Network.enable` to workerd whether or
 * not a DevTools client is attached; workerd then emits one `Network.dataReceived` per chunk a Worker's
 * `fetch` response delivers (a few KiB each), and the proxy forwards each one to wrangler's Node process
 * as a `debug-log` POST that it does not await, so a long response opens thousands of loopback
 * connections at once (left in CLOSE_WAIT by workerd) and buffers every message until DevTools attach.
 * An export streaming gigabytes from ClickHouse exhausted workerd's 20,000 descriptors in 90 s
 * (docs/development.md, "Wrangler's inspector"). Fixed upstream (workers-sdk #14191, #14243: the
 * proxy enables Network only for an attached DevTools client); until then, this connects to the
 * proxy as a DevTools client every few seconds, sends `Network.disable`, and leaves, which also drains
 * the proxy's buffer. A human's DevTools holding the one client slot keeps it: the connection is then
 * refused and nothing is changed.
 */
export function quietNetworkInspection(inspectorPort: number): {
  /** Resolves once the Network domain is off (wrangler serving; await before the work starts). */
  quieted: Promise<void>;
  stop(): void;
} {
  let stopped = false;
  const interval = setInterval(() => {
    void disableNetwork(inspectorPort);
  }, EVERY_MS);
  interval.unref();
  const quieted = (async () => {
    const deadline = Date.now() + 60_000;
    while (!stopped && !(await disableNetwork(inspectorPort))) {
      if (Date.now() > deadline) {
        console.warn(`inspector on ${inspectorPort}: Network.disable not answered; its events stay on`);
        return;
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  return {
    quieted,
    stop() {
      stopped = true;
      clearInterval(interval);
    },
  };
}

// Far above the ids the proxy gives its own commands, whose answers it replays to a new client.
let nextId = 2_000_000_000;

/** One visit: true once the runtime answered `Network.disable`, false if the proxy could not be reached. */
function disableNetwork(inspectorPort: number): Promise<boolean> {
  const id = ++nextId;
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${inspectorPort}/ws`);
    const timer = setTimeout(() => {
      ws.terminate();
      resolve(false);
    }, 5000);
    timer.unref();
    ws.on("open", () => ws.send(JSON.stringify({ id, method: "Network.disable" })));
    ws.on("message", (data) => {
      // The proxy replays its buffered runtime messages first; the answer to ours ends the visit.
      if ((JSON.parse(String(data)) as { id?: number }).id === id) {
        clearTimeout(timer);
        ws.close();
        resolve(true);
      }
    });
    // Not listening yet, or the one client slot is taken (a human's DevTools): try again later.
    ws.on("error", () => {
      clearTimeout(timer);
      resolve(false);
    });
    ws.on("close", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });
}
