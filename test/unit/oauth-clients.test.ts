import { describe, expect, it } from "vitest";
import { redirectUriAllowed, redirectUriProblem } from "../../workers/api/accounts/oauth/clients.js";
import { parseScope } from "../../workers/api/credentials/grants.js";

const cli = {
  id: "fdc_framedash_cli",
  name: "CLI",
  redirectUris: ["http://127.0.0.1/callback", "http://[::1]/callback"],
};
const web = { id: "fdc_web", name: "Web", redirectUris: ["https://app.example.com/oauth/cb?x=1"] };

describe("redirect URI matching", () => {
  it("a loopback IP literal matches on any port (RFC 8252 section 7.3), same path and query", () => {
    for (const uri of [
      "http://127.0.0.1:53682/callback",
      "http://127.0.0.1/callback",
      "http://[::1]:1234/callback",
    ]) {
      expect(redirectUriAllowed(cli, uri), uri).toBe(true);
    }
    for (const uri of [
      "http://127.0.0.1:53682/callback/",
      "http://127.0.0.1:53682/other",
      "http://127.0.0.1:53682/callback?x=1",
      "http://127.0.0.1:53682/callback#f",
      "http://localhost:53682/callback",
      "https://127.0.0.1:53682/callback",
      "http://user@127.0.0.1:53682/callback",
      "http://127.0.0.2:53682/callback",
      undefined,
    ]) {
      expect(redirectUriAllowed(cli, uri), String(uri)).toBe(false);
    }
  });

  it("anything else must match exactly", () => {
    expect(redirectUriAllowed(web, "https://app.example.com/oauth/cb?x=1")).toBe(true);
    expect(redirectUriAllowed(web, "https://app.example.com/oauth/cb?x=2")).toBe(false);
    expect(redirectUriAllowed(web, "https://app.example.com:8443/oauth/cb?x=1")).toBe(false);
  });

  it("registrable URIs: https, http on a loopback IP, private-use schemes; no fragments", () => {
    expect(redirectUriProblem("https://app.example.com/cb")).toBeNull();
    expect(redirectUriProblem("http://127.0.0.1/callback")).toBeNull();
    expect(redirectUriProblem("com.example.game:/oauth")).toBeNull();
    expect(redirectUriProblem("http://example.com/cb")).toBe("may use http only on 127.0.0.1 or [::1]");
    expect(redirectUriProblem("https://app.example.com/cb#x")).toBe("must not have a fragment");
    expect(redirectUriProblem("javascript:alert(1)")).toBe("has an unsupported scheme");
    expect(redirectUriProblem("/relative")).toBe("is not an absolute URI");
  });
});

describe("scope parameter", () => {
  it("grants only analytics:read and resources:write, in a fixed order; absent means analytics:read", () => {
    expect(parseScope(undefined)).toEqual({ ok: true, scopes: ["analytics:read"] });
    expect(parseScope("resources:write analytics:read")).toEqual({
      ok: true,
      scopes: ["analytics:read", "resources:write"],
    });
    expect(parseScope("analytics:read data:admin")).toEqual({ ok: false, refused: ["data:admin"] });
    expect(parseScope("events:write")).toEqual({ ok: false, refused: ["events:write"] });
    expect(parseScope(" ")).toEqual({ ok: false, refused: ["(empty)"] });
  });
});
