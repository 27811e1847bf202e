import { createServer, type Server } from "node:http";

export type CallbackServer = { server: Server; port: number; received: URL[] };

/** A CLI's loopback OAuth receiver: records each request it is sent to and answers a small page. */
export function startCallbackServer(): Promise<CallbackServer> {
  const received: URL[] = [];
  const server = createServer((req, res) => {
    received.push(new URL(req.url ?? "/", "http://127.0.0.1"));
    res.writeHead(200, { "Content-Type": "text/html" }).end("<title>Login complete</title>done");
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const addr = server.address();
      resolve({ server, port: typeof addr === "object" && addr ? addr.port : 0, received });
    });
  });
}
