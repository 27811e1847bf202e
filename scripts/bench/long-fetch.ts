import http from "node:http";

/**
 * `fetch` over node:http, for statements that run longer than Node's fetch waits for response headers
 * (300 s): a rebuild or a mutation on a loaded machine. Requests with string bodies only (queries and
 * commands); the answer is buffered.
 */
export const longFetch: typeof fetch = (input, init) =>
  new Promise((resolve, reject) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    const req = http.request(url, { method: init?.method ?? "GET", headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const status = res.statusCode ?? 500;
        const out = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (v !== undefined) {
            out.set(k, Array.isArray(v) ? v.join(", ") : v);
          }
        }
        resolve(
          new Response(status === 204 || status === 304 ? null : Buffer.concat(chunks), {
            status,
            headers: out,
          }),
        );
      });
    });
    req.on("error", reject);
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== "string") {
      reject(new Error("longFetch sends string bodies only"));
      return;
    }
    req.end(body ?? undefined);
  });
