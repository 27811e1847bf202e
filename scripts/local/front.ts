// The front door of `npm run dev`: a plain Node HTTP proxy on the stack's port in front of `wrangler dev`
// (which listens on a loopback port of its own), there for one reason. Wrangler runs its ProxyWorker and
// the Workers in two workerd processes and hands each request across a pooled keep-alive connection.
// Both ends of that hop close an idle connection after 5 s (kj's client idleTimeout and server
// pipelineTimeout), so a request that reuses a connection idle for about 5 s can be written into one
// the other end is closing: workerd answers "Network connection lost", and wrangler 4.86's ProxyWorker
// reports every such loss on a POST as 503 "Your worker restarted mid-request" (no CORS headers) though
// nothing restarted and the Workers never saw the request (cloudflare/workers-sdk#14641: it compares the
// request's URL, path included, with the Workers' origin to tell a restart, so every loss looks like
// one). A game sending on a 5 s timer (the web SDK's default flush interval) hits that window again and
// again. The hop is inside wrangler: nothing outside it can keep all of its pooled connections warm.
//
// So this door sends exactly that answer's request again (and one its own reused connection lost before
// any answer). Everything else is transparent: the request is streamed upstream as it arrives, framed as
// the client framed it (its Content-Length, or Transfer-Encoding: chunked, or no body), a client that
// goes away mid-request (a body shorter than its Content-Length, a reset) aborts the upstream request,
// and the answer is streamed back. A copy of the body is kept beside the stream only for the retry, and
// a request is sent again only once that copy is whole (the client's body complete, within MAX_COPY_BYTES).
import http from "node:http";
import type { AddressInfo } from "node:net";
import { brotliDecompressSync, gunzipSync, inflateSync } from "node:zlib";

const PROXY_LOST = "Your worker restarted mid-request";
/** Sends of one request in all: the first and up to four retries of the lost hop. */
const ATTEMPTS = 5;
/** Above every body the Workers accept (16 MiB content uploads); a larger one is never sent again. */
const MAX_COPY_BYTES = 32 * 1024 * 1024;
/** Below workerd's 5 s, so this door's own idle connections to wrangler are never the ones racing. */
const UPSTREAM_IDLE_MS = 2_000;
/** Above what browsers and undici keep idle connections for, so the client closes first. */
const CLIENT_KEEP_ALIVE_MS = 65_000;
/**
 * Connection-level headers, the connection's own business. Content-Length and Transfer-Encoding are
 * not among them here: they frame the body and are sent on as the client sent them. Expect is answered
 * by this door (Node's server sends 100 Continue) and not passed on.
 */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "upgrade",
  "proxy-connection",
  "te",
  "trailer",
  "expect",
]);

export type FrontDoor = {
  port: number;
  /** Requests sent again after the hop to the Workers lost them (each retry counted). */
  retries(): number;
  close(): Promise<void>;
};

type Upstream =
  | { res: http.IncomingMessage }
  /** No answer; `resend` when the request surely never reached the Workers (a reused connection lost). */
  | { lost: string; resend: boolean };

/** The client's body as it arrives, up to MAX_COPY_BYTES: only for sending it again. */
class BodyCopy {
  private chunks: Buffer[] = [];
  private bytes = 0;
  overflowed = false;
  /** Resolves true once the client's body ended whole, false if the client went away first. */
  readonly whole: Promise<boolean>;

  constructor(req: http.IncomingMessage) {
    req.on("data", (chunk: Buffer) => {
      if (this.overflowed) {
        return;
      }
      this.bytes += chunk.length;
      if (this.bytes > MAX_COPY_BYTES) {
        this.overflowed = true;
        this.chunks = [];
      } else {
        this.chunks.push(chunk);
      }
    });
    this.whole = new Promise((resolve) => {
      req.once("end", () => resolve(req.complete));
      req.once("error", () => resolve(false));
      req.once("close", () => resolve(req.complete));
    });
  }

  body(): Buffer {
    return Buffer.concat(this.chunks);
  }

  /** No retry can come any more (the answer is passed on): what is held and what is still to come go. */
  drop(): void {
    this.overflowed = true;
    this.chunks = [];
  }
}

export async function startFrontDoor(opts: {
  host: string;
  port: number;
  upstreamPort: number;
  log?: (line: string) => void;
}): Promise<FrontDoor> {
  const agent = new http.Agent({ keepAlive: true, timeout: UPSTREAM_IDLE_MS });
  let retried = 0;

  /** Opens the upstream request with the client's headers and framing; the body is written by the caller. */
  const open = (req: http.IncomingMessage): http.ClientRequest => {
    const headers: Record<string, string | string[]> = {};
    for (let i = 0; i < req.rawHeaders.length; i += 2) {
      const name = (req.rawHeaders[i] as string).toLowerCase();
      const value = req.rawHeaders[i + 1] as string;
      if (HOP_BY_HOP.has(name)) {
        continue;
      }
      const had = headers[name];
      headers[name] = had === undefined ? value : [...(Array.isArray(had) ? had : [had]), value];
    }
    // The Host the client used stays, so the Workers see their public origin in request.url.
    const out = http.request({
      host: "127.0.0.1",
      port: opts.upstreamPort,
      method: req.method,
      path: req.url,
      headers,
      agent,
    });
    // Its errors are read through answer(); a later one (the client gone, the request destroyed) is moot.
    out.on("error", () => {});
    if (headers["content-length"] === undefined && headers["transfer-encoding"] === undefined) {
      // No body, and none announced: Node would otherwise add "Content-Length: 0" to a POST.
      out.removeHeader("content-length");
      out.removeHeader("transfer-encoding");
    }
    return out;
  };

  const answer = (out: http.ClientRequest): Promise<Upstream> =>
    new Promise((resolve) => {
      out.once("response", (res) => resolve({ res }));
      out.once("error", (err) =>
        // A reused connection lost before any answer never delivered the request: safe to send again.
        resolve({ lost: err.message, resend: out.reusedSocket }),
      );
    });

  const serve = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const copy = new BodyCopy(req);
    let out: http.ClientRequest | undefined;
    let clientGone = false;
    const goneAway = () => {
      clientGone = true;
      // The upstream request is aborted, not ended: the Workers see a broken body, never a short one.
      out?.destroy();
    };
    req.once("error", goneAway);
    res.once("close", () => {
      if (!res.writableFinished) {
        goneAway();
      }
    });
    for (let attempt = 1; ; attempt++) {
      out = open(req);
      if (attempt === 1) {
        req.pipe(out);
      } else {
        out.end(copy.body());
      }
      const up = await answer(out);
      if (clientGone) {
        out.destroy();
        if ("res" in up) {
          up.res.destroy();
        }
        return;
      }
      let why: string;
      if ("lost" in up) {
        why = `connection lost before an answer (${up.lost})`;
        if (!up.resend || attempt >= ATTEMPTS || !(await wholeCopy(req, out, copy))) {
          res.writeHead(502, { "content-type": "text/plain" }).end("the local Workers did not answer\n");
          return;
        }
      } else if (up.res.statusCode === 503 && attempt < ATTEMPTS) {
        const raw = await readAll(up.res);
        if (
          !decoded(raw, up.res.headers["content-encoding"]).startsWith(PROXY_LOST) ||
          !(await wholeCopy(req, out, copy))
        ) {
          res.writeHead(503, responseHeaders(up.res)).end(raw);
          return;
        }
        why = "wrangler's proxy lost the connection to the Workers (workers-sdk#14641)";
      } else {
        copy.drop();
        res.writeHead(up.res.statusCode ?? 502, responseHeaders(up.res));
        // An answer cut off upstream is cut off here too, never ended as if whole.
        const cut = () => {
          if (!res.destroyed) {
            opts.log?.(
              `${req.method} ${req.url}: wrangler cut its answer off; the client's connection is closed`,
            );
            res.destroy();
          }
        };
        up.res.once("error", cut);
        up.res.once("aborted", cut);
        up.res.pipe(res);
        return;
      }
      if (clientGone) {
        return;
      }
      retried++;
      opts.log?.(`${req.method} ${req.url}: ${why}; sent again (attempt ${attempt + 1})`);
      await new Promise((r) => setTimeout(r, 20 * attempt));
    }
  };

  const server = http.createServer((req, res) => {
    serve(req, res).catch((err: unknown) => {
      opts.log?.(
        `${req.method} ${req.url}: ${err instanceof Error ? err.message : String(err)}; connection closed`,
      );
      res.destroy();
    });
  });
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

/**
 * Whether the whole body is in hand to send again: the lost attempt is let go and the rest of the
 * client's body still flows into the copy until it ends (or the client goes away).
 */
async function wholeCopy(
  req: http.IncomingMessage,
  lost: http.ClientRequest,
  copy: BodyCopy,
): Promise<boolean> {
  req.unpipe(lost);
  lost.destroy();
  req.resume();
  return (await copy.whole) && !copy.overflowed;
}

/** The answer's headers as workerd wrote them, minus the connection's own (Node frames the body again). */
function responseHeaders(res: http.IncomingMessage): string[] {
  const raw: string[] = [];
  for (let i = 0; i < res.rawHeaders.length; i += 2) {
    const name = res.rawHeaders[i] as string;
    const lower = name.toLowerCase();
    if (!HOP_BY_HOP.has(lower) && lower !== "transfer-encoding") {
      raw.push(name, res.rawHeaders[i + 1] as string);
    }
  }
  return raw;
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
