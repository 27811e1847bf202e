import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { type DohControl, dohControl } from "./doh-control.js";

// A DNS-over-HTTPS resolver for tests, on loopback: the JSON API as Cloudflare's and Google's public
// resolvers serve it (`GET /dns-query?name=…&type=TXT`, `accept: application/dns-json`, answered
// `{"Status":0,"Answer":[{"name":…,"type":16,"TTL":…,"data":"\"…\""}]}`, NXDOMAIN as Status 3). Only
// TXT records, set by the tests through the control plane (`POST /__harness/…`, doh-control.ts); it can
// be made to fail (503, or SERVFAIL) as a resolver that is down does.

export type DohServer = DohControl & { close(): Promise<void> };

async function json(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as Record<string, unknown>;
}

/** A TXT value as the JSON API writes it: quoted, escaped, split into 255-byte character-strings. */
function txtData(value: string): string {
  const parts: string[] = [];
  for (let i = 0; i < value.length || parts.length === 0; i += 255) {
    parts.push(`"${value.slice(i, i + 255).replace(/["\\]/g, (ch) => `\\${ch}`)}"`);
  }
  return parts.join(" ");
}

export async function startDohServer(host = "127.0.0.1"): Promise<DohServer> {
  const records = new Map<string, string[]>();
  const counts = new Map<string, number>();
  let mode: "up" | "down" | "servfail" = "up";
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://resolver");
    const send = (status: number, body: unknown, type = "application/json") => {
      res.writeHead(status, { "content-type": type }).end(JSON.stringify(body));
    };
    if (req.method === "POST" && url.pathname.startsWith("/__harness/")) {
      json(req).then(
        (body) => {
          const what = url.pathname.slice("/__harness/".length);
          const name = String(body.name ?? "")
            .toLowerCase()
            .replace(/\.$/, "");
          if (what === "txt") {
            const values = Array.isArray(body.values) ? body.values.map(String) : [];
            if (values.length > 0) {
              records.set(name, values);
            } else {
              records.delete(name);
            }
            return send(200, { ok: true });
          }
          if (what === "mode" && (body.mode === "up" || body.mode === "down" || body.mode === "servfail")) {
            mode = body.mode;
            return send(200, { ok: true });
          }
          if (what === "queries") {
            return send(200, { count: counts.get(name) ?? 0 });
          }
          return send(404, { error: "unknown control" });
        },
        (err: unknown) => send(400, { error: String(err) }),
      );
      return;
    }
    if (req.method !== "GET" || url.pathname !== "/dns-query") {
      return send(404, { error: "not found" });
    }
    if (req.headers.accept !== "application/dns-json") {
      return send(415, { error: "accept: application/dns-json" });
    }
    const name = (url.searchParams.get("name") ?? "").toLowerCase().replace(/\.$/, "");
    const type = url.searchParams.get("type");
    counts.set(name, (counts.get(name) ?? 0) + 1);
    if (mode === "down") {
      return send(503, { error: "resolver down" });
    }
    const question = [{ name: `${name}.`, type: 16 }];
    if (mode === "servfail") {
      return send(
        200,
        { Status: 2, TC: false, RD: true, RA: true, Question: question },
        "application/dns-json",
      );
    }
    const values = type === "TXT" || type === "16" ? records.get(name) : undefined;
    if (!values) {
      return send(
        200,
        { Status: 3, TC: false, RD: true, RA: true, Question: question },
        "application/dns-json",
      );
    }
    return send(
      200,
      {
        Status: 0,
        TC: false,
        RD: true,
        RA: true,
        Question: question,
        Answer: values.map((v) => ({ name: `${name}.`, type: 16, TTL: 300, data: txtData(v) })),
      },
      "application/dns-json",
    );
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://${host}:${port}/dns-query`;
  return {
    ...dohControl(url),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
