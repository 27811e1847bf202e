// Plays the role of Neon's proxy for @neondatabase/serverless, in front of a
// loopback Postgres, on both of its transports:
// - WebSocket (Pool, Client): the driver speaks the Postgres wire protocol
//   inside WebSocket binary frames; this relays those bytes over plain TCP.
// - HTTP (`neon()`, one statement or one non-interactive transaction per
//   request): POST /sql with the statement as JSON, answered as Neon's SQL
//   endpoint does, over a pool of connections kept open here, so a request
//   pays no connection setup (what Neon's own endpoint does for a Worker).
//
// Driver configuration (Workers or Node):
//   neonConfig.wsProxy = (host, port) => `127.0.0.1:${proxyPort}/?address=${host}:${port}`;
//   neonConfig.useSecureWebSocket = false;
//   neonConfig.pipelineTLS = false;
//   neonConfig.pipelineConnect = false;
//   neonConfig.fetchEndpoint = `http://127.0.0.1:${proxyPort}/sql`;
import http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import pg from "pg";
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
  const sql = new SqlOverHttp(allowedHosts);
  const server = http.createServer((req, res) => {
    if (req.method === "POST" && new URL(req.url ?? "/", "http://proxy").pathname === "/sql") {
      void sql.handle(req, res);
      return;
    }
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
  return {
    port,
    close: async () => {
      await closeProxy(server, wss);
      await sql.close();
    },
  };
}

type Statement = { query: string; params: unknown[] };

/** The members of a Postgres error Neon's endpoint returns (the driver copies them onto its error). */
const ERROR_FIELDS = [
  "severity",
  "code",
  "detail",
  "hint",
  "position",
  "internalPosition",
  "internalQuery",
  "where",
  "schema",
  "table",
  "column",
  "dataType",
  "constraint",
  "file",
  "line",
  "routine",
] as const;

const ISOLATION = new Set(["ReadUncommitted", "ReadCommitted", "RepeatableRead", "Serializable"]);

// Values go back as Postgres's text output; the driver parses them by type OID, as it does Neon's.
const RAW_TEXT = { getTypeParser: () => (value: string) => value };

/**
 * Neon's SQL-over-HTTP endpoint for the local stack: `{query, params}` runs one statement,
 * `{queries: [...]}` runs them in one transaction (Neon-Batch-* headers: isolation level, read only,
 * deferrable). The target is the Neon-Connection-String header; one pool per target is kept open.
 * Anything it does not implement is refused with 400, never ignored.
 */
class SqlOverHttp {
  private readonly pools = new Map<string, pg.Pool>();

  constructor(private readonly allowedHosts: Set<string>) {}

  async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      if (req.headers["neon-raw-text-output"] !== "true" || req.headers["neon-array-mode"] !== "true") {
        return reply(res, 400, { message: "only Neon-Raw-Text-Output and Neon-Array-Mode true are served" });
      }
      const pool = this.poolFor(String(req.headers["neon-connection-string"] ?? ""));
      if (!pool) {
        return reply(res, 400, { message: "Neon-Connection-String must name an allowed loopback Postgres" });
      }
      const body = JSON.parse(await readAll(req)) as Partial<Statement> & { queries?: Statement[] };
      if (Array.isArray(body.queries)) {
        const results = await this.transaction(pool, body.queries, req.headers);
        return reply(res, 200, { results });
      }
      if (typeof body.query !== "string") {
        return reply(res, 400, { message: "body must hold query or queries" });
      }
      return reply(res, 200, await run(pool, { query: body.query, params: body.params ?? [] }));
    } catch (err) {
      if (err instanceof Error && typeof Reflect.get(err, "severity") === "string") {
        // A statement error: 400 with Postgres's fields, as Neon answers it.
        const fields = Object.fromEntries(ERROR_FIELDS.map((f) => [f, Reflect.get(err, f)]));
        return reply(res, 400, { message: err.message, ...fields });
      }
      // Postgres unreachable (or a malformed request): not a statement error.
      res
        .writeHead(503, { "Content-Type": "text/plain" })
        .end(err instanceof Error ? err.message : String(err));
    }
  }

  private poolFor(connectionString: string): pg.Pool | undefined {
    let url: URL;
    try {
      url = new URL(connectionString);
    } catch {
      return undefined;
    }
    if (!this.allowedHosts.has(normalizeHost(url.hostname))) {
      return undefined;
    }
    let pool = this.pools.get(connectionString);
    if (!pool) {
      pool = new pg.Pool({ connectionString, max: 8, idleTimeoutMillis: 30_000 });
      pool.on("error", () => {});
      this.pools.set(connectionString, pool);
    }
    return pool;
  }

  private async transaction(pool: pg.Pool, queries: Statement[], headers: http.IncomingHttpHeaders) {
    const isolation = headers["neon-batch-isolation-level"];
    if (isolation !== undefined && !ISOLATION.has(String(isolation))) {
      throw new Error(`unsupported Neon-Batch-Isolation-Level ${isolation}`);
    }
    const modes = [
      isolation
        ? `ISOLATION LEVEL ${String(isolation)
            .replace(/([a-z])([A-Z])/g, "$1 $2")
            .toUpperCase()}`
        : "",
      headers["neon-batch-read-only"] === "true" ? "READ ONLY" : "",
      headers["neon-batch-deferrable"] === "true" ? "DEFERRABLE" : "",
    ].filter(Boolean);
    const client = await pool.connect();
    try {
      await client.query(`BEGIN ${modes.join(" ")}`);
      const results = [];
      for (const q of queries) {
        results.push(await run(client, q));
      }
      await client.query("COMMIT");
      return results;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {});
      throw err;
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.end().catch(() => {})));
    this.pools.clear();
  }
}

async function run(db: pg.Pool | pg.PoolClient, { query, params }: Statement) {
  const r = await db.query({ text: query, values: params, rowMode: "array", types: RAW_TEXT });
  return {
    command: r.command,
    rowCount: r.rowCount,
    rows: r.rows,
    fields: r.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
    rowAsArray: true,
  };
}

function reply(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
}

function readAll(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
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
