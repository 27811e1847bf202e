import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedProject } from "../../scripts/drill/seed.js";
import { type FrontDoor, startFrontDoor } from "../../scripts/local/front.js";
import { batchOf } from "../support/batches.js";
import { type Service, startService } from "../support/service.js";
import { waitFor } from "../support/wait.js";

// `npm run dev`'s front door (scripts/local/front.ts) is transparent to HTTP framing (issue 41 item 2):
// the service as `npm run dev` runs it (wrangler dev behind the door), raw requests over TCP through the
// door and, for comparison, straight to wrangler's port. A body shorter than its Content-Length, the
// client then ending its side, gets a 400 or a dropped connection and stores nothing; a chunked body
// without Content-Length gets the ingest Worker's 411 at once and stores nothing.

let service: Service;
let door: FrontDoor;
let projectId = "";
let ingestKey = "";
let fullKey = "";

beforeAll(async () => {
  service = await startService();
  door = await startFrontDoor({
    host: "127.0.0.1",
    port: 0,
    upstreamPort: Number(new URL(service.origin).port),
  });
  const seeded = await seedProject(service.databaseUrl, { studio: "Door Studio", game: "Door Game" }, [
    "ingest",
    "full",
  ] as const);
  projectId = seeded.projectId;
  ingestKey = seeded.keys.ingest;
  fullKey = seeded.keys.full;
}, 300_000);

afterAll(async () => {
  await door?.close();
  await service?.close();
}, 60_000);

type RawAnswer = { status: number | null; text: string };

/**
 * One request written byte for byte on a fresh connection; `halfClose` ends the client's side after
 * writing. Resolves when the server closes the connection (status null: dropped without an answer) or
 * has sent a whole answer.
 */
function raw(port: number, head: string, body: Buffer, halfClose: boolean): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let text = "";
    const done = () => {
      socket.destroy();
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve({ status: status ? Number(status) : null, text });
    };
    socket.setTimeout(60_000, () => {
      socket.destroy();
      reject(new Error(`no answer and no close within 60 s; got ${JSON.stringify(text.slice(0, 200))}`));
    });
    socket.on("connect", () => {
      socket.write(head);
      socket.write(body);
      if (halfClose) {
        socket.end();
      }
    });
    socket.on("data", (chunk) => {
      text += chunk.toString("latin1");
      // A whole answer: its head and the Content-Length of body it announced.
      const end = text.indexOf("\r\n\r\n");
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))?.[1];
      const chunkedEnd =
        /\r\ntransfer-encoding: *chunked/i.test(text.slice(0, end)) && text.endsWith("\r\n0\r\n\r\n");
      if (end >= 0 && ((length !== undefined && text.length >= end + 4 + Number(length)) || chunkedEnd)) {
        done();
      }
    });
    socket.on("close", done);
    socket.on("error", () => {
      // a reset is the server dropping the connection: "close" follows
    });
  });
}

function head(port: number, lines: string[]): string {
  return [
    "POST /v1/events HTTP/1.1",
    `Host: 127.0.0.1:${port}`,
    `X-API-Key: ${ingestKey}`,
    "Content-Type: application/x-protobuf",
    "X-SDK-Version: door-test/1.0",
    ...lines,
    "",
    "",
  ].join("\r\n");
}

async function stored(sessionId: string): Promise<number> {
  const res = await fetch(`${service.origin}/api/v1/query`, {
    method: "POST",
    headers: { "X-API-Key": fullKey, "Content-Type": "application/json" },
    body: JSON.stringify({
      project_id: projectId,
      sql: `SELECT count() AS n FROM events WHERE session_id = '${sessionId}'`,
    }),
  });
  const json = (await res.json()) as { data?: { rows: Array<Record<string, unknown>> } };
  expect(res.status).toBe(200);
  return Number(json.data?.rows[0]?.n);
}

/**
 * After a bad request: a good batch (its own session) through the same port, waited for until stored;
 * what the bad one would have stored was sent earlier, so it would be there too by then.
 */
async function afterMarker(port: number, marker: string): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/v1/events`, {
    method: "POST",
    headers: {
      "X-API-Key": ingestKey,
      "Content-Type": "application/x-protobuf",
      "X-SDK-Version": "door-test/1.0",
    },
    body: batchOf(5, { sessionId: marker }),
  });
  expect(res.status).toBe(202);
  await waitFor(
    () => stored(marker),
    (n) => n === 5,
    { timeoutMs: 60_000, intervalMs: 200, message: `marker ${marker} stored` },
  );
  await service.insertsSettled();
}

describe("through the front door", () => {
  const port = () => door.port;

  it("a body shorter than its Content-Length, the client ending its side: 400 or dropped, nothing stored", async () => {
    const session = "lying-length";
    const body = Buffer.from(batchOf(20, { sessionId: session }));
    const answer = await raw(port(), head(port(), [`Content-Length: ${body.length + 10}`]), body, true);
    expect([400, null]).toContain(answer.status);
    await afterMarker(port(), "after-lying-length");
    expect(await stored(session)).toBe(0);
  });

  it("a chunked body without Content-Length: 411 at once, nothing stored", async () => {
    const session = "chunked";
    const body = Buffer.from(batchOf(20, { sessionId: session }));
    const chunked = Buffer.concat([
      Buffer.from(`${body.length.toString(16)}\r\n`),
      body,
      Buffer.from("\r\n0\r\n\r\n"),
    ]);
    const answer = await raw(port(), head(port(), ["Transfer-Encoding: chunked"]), chunked, false);
    expect(answer.status).toBe(411);
    expect(answer.text).toContain("Content-Length");
    await afterMarker(port(), "after-chunked");
    expect(await stored(session)).toBe(0);
  });
});
