// Plays the role of Neon's wsproxy for @neondatabase/serverless: the driver
// speaks the Postgres wire protocol inside WebSocket binary frames, and this
// relays those bytes to a loopback Postgres over plain TCP.
//
// Driver configuration (Workers or Node):
//   neonConfig.wsProxy = (host, port) => `127.0.0.1:${proxyPort}/?address=${host}:${port}`;
//   neonConfig.useSecureWebSocket = false;
//   neonConfig.pipelineTLS = false;
//   neonConfig.pipelineConnect = false;
import http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import { type RawData, type WebSocket, WebSocketServer } from "ws";

export interface NeonProxyOptions {
  port?: number;
  /** Hosts the proxy may connect to; anything else is refused at upgrade. */
  allowedHosts?: string[];
}

export interface NeonProxy {
  port: number;
  close(): Promise<void>;
}

interface Target {
  host: string;
  port: number;
}

// Pause the Postgres socket while this much is queued towards the browser-side
// WebSocket, so a large result cannot pile up in memory.
const HIGH_WATER_BYTES = 1024 * 1024;
const LOW_WATER_BYTES = 256 * 1024;

export async function startNeonProxy(opts: NeonProxyOptions = {}): Promise<NeonProxy> {
  const allowedHosts = new Set((opts.allowedHosts ?? ["127.0.0.1", "localhost", "::1"]).map(normalizeHost));
  const wss = new WebSocketServer({ noServer: true });
  const server = http.createServer((_req, res) => {
    res.writeHead(426, { "Content-Type": "text/plain" }).end("WebSocket upgrade required\n");
  });
  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    // An aborted handshake must not become an uncaught 'error' event.
    socket.on("error", () => {});
    const target = parseTarget(req.url);
    if (target === undefined || !allowedHosts.has(target.host)) {
      refuseUpgrade(socket, target === undefined ? 400 : 403);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => relay(ws, target));
  });
  const port = await listen(server, opts.port ?? 0);
  return { port, close: () => closeProxy(server, wss) };
}

function listen(server: http.Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve((server.address() as net.AddressInfo).port);
    });
  });
}

async function closeProxy(server: http.Server, wss: WebSocketServer): Promise<void> {
  for (const client of wss.clients) {
    client.terminate();
  }
  await new Promise<void>((resolve) => {
    wss.close(() => resolve());
  });
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** Reads `address=host:port` (also `[v6]:port` and bare `::1:port`) from the request URL. */
function parseTarget(requestUrl: string | undefined): Target | undefined {
  const address = new URL(requestUrl ?? "/", "http://proxy").searchParams.get("address");
  if (address === null) {
    return undefined;
  }
  const colon = address.lastIndexOf(":");
  const port = Number(address.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port < 1 || port > 65535) {
    return undefined;
  }
  return { host: normalizeHost(address.slice(0, colon)), port };
}

function normalizeHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
}

function refuseUpgrade(socket: Duplex, status: 400 | 403): void {
  const reason = status === 403 ? "Forbidden" : "Bad Request";
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

function relay(ws: WebSocket, target: Target): void {
  // net.Socket queues writes made before the connection is up, so frames that
  // arrive early (the startup message) are not lost.
  const tcp = net.connect({ host: target.host, port: target.port });
  tcp.setNoDelay(true);
  forwardToPostgres(ws, tcp);
  forwardToClient(tcp, ws);
  ws.on("close", () => tcp.end());
  ws.on("error", () => tcp.destroy());
  tcp.on("close", () => closeWebSocket(ws, 1000, ""));
  tcp.on("error", (err) => closeWebSocket(ws, 1011, `upstream: ${err.message}`));
}

function forwardToPostgres(ws: WebSocket, tcp: net.Socket): void {
  ws.on("message", (data: RawData) => {
    if (!tcp.write(toBuffer(data))) {
      ws.pause();
    }
  });
  tcp.on("drain", () => ws.resume());
}

function forwardToClient(tcp: net.Socket, ws: WebSocket): void {
  let queued = 0;
  tcp.on("data", (chunk: Buffer) => {
    if (ws.readyState !== ws.OPEN) {
      return;
    }
    queued += chunk.length;
    ws.send(chunk, { binary: true }, () => {
      queued -= chunk.length;
      if (queued < LOW_WATER_BYTES && tcp.isPaused()) {
        tcp.resume();
      }
    });
    if (queued > HIGH_WATER_BYTES) {
      tcp.pause();
    }
  });
}

function closeWebSocket(ws: WebSocket, code: number, reason: string): void {
  if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) {
    // A close reason is limited to 123 bytes on the wire.
    ws.close(code, reason.slice(0, 120));
  }
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) {
    return data;
  }
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}
