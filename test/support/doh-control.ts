// The control plane of the test DNS-over-HTTPS resolver (test/support/doh-server.ts), over plain fetch:
// usable from workerd (tests get its URL from `inject("dohUrl")`) and from Node.

export type DohControl = {
  /** The resolver's JSON endpoint, as the Worker's SSO_DNS_RESOLVER names it. */
  url: string;
  /** Sets the TXT records at `name` (an empty list removes them: the name then answers NXDOMAIN). */
  setTxt(name: string, values: string[]): Promise<void>;
  /** A down resolver answers every query 503 (`"servfail"`: DNS status 2), until set back to "up". */
  setMode(mode: "up" | "down" | "servfail"): Promise<void>;
  /** How many queries the resolver answered for `name`. */
  queries(name: string): Promise<number>;
};

export function dohControl(url: string): DohControl {
  const origin = new URL(url).origin;
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${origin}/__harness/${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) {
      throw new Error(`test DoH ${path}: ${res.status} ${text}`);
    }
    return JSON.parse(text) as unknown;
  };
  return {
    url,
    setTxt: async (name, values) => {
      await post("txt", { name, values });
    },
    setMode: async (mode) => {
      await post("mode", { mode });
    },
    queries: async (name) => ((await post("queries", { name })) as { count: number }).count,
  };
}
