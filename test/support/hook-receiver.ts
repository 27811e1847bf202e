import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export type ReceivedDelivery = { path: string; headers: Record<string, string>; body: string; at: number };

/**
 * A loopback endpoint standing in for webhook and Slack receivers. It runs in Node (global setup),
 * since tests run inside workerd. `POST <path>` records the request; paths containing `/fail` answer
 * 500 and `/gone` 410. `GET /received?path=<path>` returns what that path received, oldest first.
 * It also stands in for a ClickHouse whose answer fails midway (as CLICKHOUSE_URL): paths containing
 * `/clickhouse-exception` answer 200 with the start of a JSON array and then an exception's text, as a
 * streaming ClickHouse does; `/clickhouse-cut` send the start and drop the connection.
 */
export async function startHookReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const received: ReceivedDelivery[] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method === "GET" && url.pathname === "/received") {
      const path = url.searchParams.get("path");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(received.filter((r) => r.path === path)));
      return;
    }
    const body = await readBody(req);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      headers[name] = Array.isArray(value) ? value.join(", ") : (value ?? "");
    }
    received.push({ path: url.pathname, headers, body, at: Date.now() });
    if (url.pathname.includes("/clickhouse-")) {
      res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
      res.write('[\n{"x":0,"y":0,"weight":1,"event_count":1},\n');
      if (url.pathname.includes("/clickhouse-cut")) {
        res.flushHeaders();
        setImmediate(() => res.socket?.destroy());
        return;
      }
      res.end("Code: 241. DB::Exception: Memory limit (total) exceeded. (MEMORY_LIMIT_EXCEEDED)\n");
      return;
    }
    const status = url.pathname.includes("/fail") ? 500 : url.pathname.includes("/gone") ? 410 : 200;
    res.writeHead(status, { "content-type": "text/plain" });
    res.end(status === 200 ? "ok" : "no");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    // closeAllConnections: close() alone waits for the sender's keep-alive connections to time out.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
