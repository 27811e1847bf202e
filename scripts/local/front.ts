// The front door of `npm run dev`: a plain Node HTTP proxy on the stack's port in front of `wrangler dev`
// (which listens on a loopback port of its own), there for one reason. Wrangler runs its ProxyWorker and
// the Workers in two workerd processes and hands each request across a pooled keep-alive connection.
// Both ends of that hop close an idle connection after 5 s (kj's client idleTimeout and server
// pipelineTimeout), so a request that reuses a connection idle for about 5 s can be written into one
// the other end is closing: workerd answers "Network connection lost", and wrangler 4.86's ProxyWorker
// reports every such loss on a POST as 503 "Your worker restarted mid-request" (no CORS headers) though
// nothing restarted and the Workers never saw the request (cloudflare/workers-sdk#14641). A game sending
// on a 5 s timer (the web SDK's default flush interval) hits that window again and again.
//
// So this door retries exactly that answer (and a connection of its own lost before any answer), with
// the request's body, up to ATTEMPTS times. Everything else passes through untouched, streamed.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";

const PROXY_LOST = "Your worker restarted mid-request";
const ATTEMPTS = 5;
/** Below workerd's 5 s, so this door's own idle connections to wrangler are never the ones racing. */
const UPSTREAM_IDLE_MS = 2_000;
/** Above what browsers and undici keep idle connections for, so the client closes first. */
const CLIENT_KEEP_ALIVE_MS = 65_000;
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "proxy-connection"]);

export type FrontDoor = {
  port: number;
  /** Requests sent again after the hop to the Workers lost them (each retry counted). */
  retries(): number;
  close(): Promise<void>;
};

type Upstream = { status: number; headers: string[]; body: http.IncomingMessage } | { lost: string };

export async function startFrontDoor(opts: {
  host: string;
  port: number;
  upstreamPort: number;
  log?: (line: string) => void;
}): Promise<FrontDoor> {
  const agent = new http.Agent({ keepAlive: true, timeout: UPSTREAM_IDLE_MS });
  let retried = 0;

  const forward = (req: http.IncomingMessage, body: Buffer): Promise<Upstream> =>
    new Promise((resolve) => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(([k]) => !HOP_BY_HOP.has(k) && k !== "content-length"),
      );
      const out = http.request(
        {
          host: "127.0.0.1",
          port: opts.upstreamPort,
          method: req.method,
          path: req.url,
          // The Host the client used stays, so the Workers see their public origin in request.url.
          headers: { ...headers, "content-length": String(body.length) },
          agent,
        },
        (res) => {
          const raw: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const name = res.rawHeaders[i] as string;
            if (!HOP_BY_HOP.has(name.toLowerCase())) {
              raw.push(name, res.rawHeaders[i + 1] as string);
            }
          }
          resolve({ status: res.statusCode ?? 502, headers: raw, body: res });
        },
      );
      out.on("error", (err) =>
        // A reused connection lost before any answer never delivered the request: safe to send again.
        resolve({ lost: out.reusedSocket ? `reused connection lost (${err.message})` : "" }),
      );
      out.end(body);
    });

  const server = http.createServer((req, res) => {
    serve(req, res).catch(() => res.destroy());
  });
  const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const body = await readAll(req);
    for (let attempt = 1; ; attempt++) {
      const up = await forward(req, body);
      let why: string;
      if ("lost" in up) {
        why = up.lost;
        if (!why || attempt >= ATTEMPTS) {
          res.writeHead(502, { "content-type": "text/plain" }).end("the local Workers did not answer\n");
          return;
        }
      } else if (up.status === 503 && attempt < ATTEMPTS) {
        const raw = await readAll(up.body);
        if (!decoded(raw, up.body.headers["content-encoding"]).startsWith(PROXY_LOST)) {
          res.writeHead(up.status, up.headers).end(raw);
          return;
        }
        why = "wrangler's proxy lost the connection to the Workers (workers-sdk#14641)";
      } else {
        res.writeHead(up.status, up.headers);
        up.body.pipe(res);
        return;
      }
      retried++;
      opts.log?.(`${req.method} ${req.url}: ${why}; sent again (attempt ${attempt + 1})`);
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  };
  server.keepAliveTimeout = CLIENT_KEEP_ALIVE_MS;
  server.headersTimeout = CLIENT_KEEP_ALIVE_MS + 1_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    retries: () => retried,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}

/** The text of a body as workerd encoded it for the client's Accept-Encoding ("" when unreadable). */
function decoded(body: Buffer, encoding: string | undefined): string {
  try {
    const plain =
      encoding === "gzip"
        ? gunzipSync(body)
        : encoding === "br"
          ? brotliDecompressSync(body)
          : encoding === "deflate"
            ? inflateSync(body)
            : body;
    return plain.toString("utf8");
  } catch {
    return "";
  }
}

async function readAll(stream: AsyncIterable<unknown>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
