import http from "node:http";
import type { AddressInfo } from "node:net";
import net from "node:net";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type FrontDoor, startFrontDoor } from "../../scripts/local/front.js";
import { waitFor } from "../support/wait.js";

// The front door (scripts/local/front.ts) against a stand-in for wrangler's port that records every
// request as it arrived and answers what wrangler's ProxyWorker answers when its hop to the Workers is
// lost (503 "Your worker restarted mid-request") when told to. The service itself is in
// front-door.test.ts; here are what it cannot show on demand: the framing the upstream sees, the resend
// from the door's copy, and a client going away mid-body.

type Seen = {
  method: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The request's body arrived whole (false: the door aborted it). */
  complete: boolean;
};

let upstream: http.Server;
let door: FrontDoor;
let seen: Seen[];
/** How many of the next requests to answer as a lost hop. */
let loseNext = 0;

beforeEach(async () => {
  seen = [];
  loseNext = 0;
  upstream = http.createServer((req, res) => {
    const entry: Seen = {
      method: req.method ?? "",
      headers: req.headers,
      body: Buffer.alloc(0),
      complete: false,
    };
    seen.push(entry);
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("error", () => {});
    req.on("close", () => {
      entry.body = Buffer.concat(chunks);
      entry.complete = req.complete;
    });
    if (loseNext > 0) {
      loseNext--;
      res.writeHead(503, { "Retry-After": "0", "Content-Type": "text/plain" });
      res.end("Your worker restarted mid-request. Please try sending the request again.");
      return;
    }
    req.on("end", () => {
      res.writeHead(202, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ bytes: Buffer.concat(chunks).length }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, "127.0.0.1", r));
  door = await startFrontDoor({
    host: "127.0.0.1",
    port: 0,
    upstreamPort: (upstream.address() as AddressInfo).port,
  });
});

afterEach(async () => {
  await door.close();
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

const body = Buffer.from("x".repeat(50_000));

it("sends on the client's Content-Length and body as they came", async () => {
  const res = await fetch(`http://127.0.0.1:${door.port}/v1/events`, { method: "POST", body });
  expect(res.status).toBe(202);
  expect(await res.json()).toEqual({ bytes: body.length });
  expect(seen).toHaveLength(1);
  expect(seen[0]?.headers["content-length"]).toBe(String(body.length));
  expect(seen[0]?.headers["transfer-encoding"]).toBeUndefined();
});

it("sends a chunked body chunked, with no Content-Length of its own", async () => {
  const stream = new ReadableStream({
    start(c) {
      c.enqueue(body.subarray(0, 20_000));
      c.enqueue(body.subarray(20_000));
      c.close();
    },
  });
  const res = await fetch(`http://127.0.0.1:${door.port}/v1/events`, {
    method: "POST",
    body: stream,
    duplex: "half",
  } as RequestInit);
  expect(res.status).toBe(202);
  expect(seen[0]?.headers["transfer-encoding"]).toBe("chunked");
  expect(seen[0]?.headers["content-length"]).toBeUndefined();
  expect(seen[0]?.body.equals(body)).toBe(true);
});

it("adds no Content-Length to a POST that announced no body", async () => {
  const socket = net.connect(door.port, "127.0.0.1");
  socket.write("POST /v1/events HTTP/1.1\r\nHost: door\r\nConnection: close\r\n\r\n");
  let text = "";
  socket.on("data", (c) => {
    text += c.toString();
  });
  await new Promise((r) => socket.on("close", r));
  expect(text).toMatch(/^HTTP\/1\.1 202/);
  expect(seen[0]?.headers["content-length"]).toBeUndefined();
  expect(seen[0]?.headers["transfer-encoding"]).toBeUndefined();
});

it("resends a request wrangler's proxy lost, from its whole copy, once", async () => {
  loseNext = 1;
  const res = await fetch(`http://127.0.0.1:${door.port}/v1/events`, { method: "POST", body });
  expect(res.status).toBe(202);
  expect(seen).toHaveLength(2);
  expect(seen[1]?.body.equals(body)).toBe(true);
  expect(seen[1]?.headers["content-length"]).toBe(String(body.length));
  expect(door.retries()).toBe(1);
});

it("aborts the upstream request when the client goes away mid-body, and does not resend it", async () => {
  const socket = net.connect(door.port, "127.0.0.1");
  socket.on("error", () => {});
  socket.write(`POST /v1/events HTTP/1.1\r\nHost: door\r\nContent-Length: ${body.length}\r\n\r\n`);
  socket.write(body.subarray(0, 10_000));
  await waitFor(
    () => seen[0]?.headers["content-length"],
    (v) => v === String(body.length),
    {
      message: "the request upstream",
    },
  );
  socket.destroy();
  await waitFor(
    () => seen[0],
    (s) => s !== undefined && s.body.length > 0 && !s.complete,
    { message: "the upstream request aborted" },
  );
  expect(seen).toHaveLength(1);
  expect(seen[0]?.body.length).toBeLessThan(body.length);
  expect(door.retries()).toBe(0);
});

it("passes wrangler's 503 on when the client's body never came whole", async () => {
  loseNext = 5;
  const socket = net.connect(door.port, "127.0.0.1");
  socket.on("error", () => {});
  socket.write(`POST /v1/events HTTP/1.1\r\nHost: door\r\nContent-Length: ${body.length}\r\n\r\n`);
  socket.write(body.subarray(0, 10_000));
  await waitFor(
    () => seen.length,
    (n) => n === 1,
    { message: "the request upstream" },
  );
  socket.end();
  let text = "";
  socket.on("data", (c) => {
    text += c.toString();
  });
  await new Promise((r) => socket.on("close", r));
  expect(text).not.toMatch(/^HTTP\/1\.1 202/);
  expect(seen).toHaveLength(1);
  expect(door.retries()).toBe(0);
});
