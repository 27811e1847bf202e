import { env, SELF } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { beforeAll, describe, expect, it } from "vitest";
import { sessions } from "../../schema/pg/schema.js";
import { SIGN_IN_LIMITS, signInBuckets } from "../../workers/api/accounts/throttle.js";
import { SIGN_IN_FAILED } from "../../workers/api/web/pages/sign-in/view.js";
import { sha256Hex } from "../../workers/shared/credentials/secrets.js";
import { Browser, csrfOf, seedUser } from "../support/browser.js";
import { seedTenant, type Tenant, withDb } from "../support/harness.js";
import { api, problemOf } from "../support/http.js";
import type { OkBody } from "../support/schema.js";

let t: Tenant;
let alice: { id: string; email: string; password: string };

beforeAll(async () => {
  t = await seedTenant("pro", "Sign-in Studio");
  alice = await seedUser(t.tenantId);
});

function sessionCookie(res: Response): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith("gt_session="));
}

/** Counts `n` failures in a sign-in bucket now, as that many failed attempts would have. */
async function fill(bucket: string, n: number): Promise<void> {
  const r = await env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(bucket)).chargeWindow(
    1000,
    SIGN_IN_LIMITS.windowSeconds,
    n,
  );
  expect(r.allowed).toBe(true);
}

/** The failure text as the page shows it (the escaper writes & as &amp;). */
const FAILED_HTML = SIGN_IN_FAILED.replaceAll("&", "&amp;");

describe("GET /sign-in", () => {
  it("is a form with Email and Password labels, a Sign in button, a CSRF token and the way back", async () => {
    const res = await new Browser().get("/sign-in?returnTo=%2Fsettings%2Fconnected-apps");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    const html = await res.text();
    expect(html).toContain('<label for="email">Email</label>');
    expect(html).toContain('<label for="password">Password</label>');
    expect(html).toContain('<button type="submit">Sign in</button>');
    expect(html).toContain('name="returnTo" value="/settings/connected-apps"');
    expect(csrfOf(html)).toMatch(/^csrf_/);
  });

  it("keeps returnTo on this site: another host or a scheme-relative path becomes /", async () => {
    for (const bad of ["https://evil.example/x", "//evil.example/x", "/\\evil.example"]) {
      const html = await (await new Browser().get(`/sign-in?returnTo=${encodeURIComponent(bad)}`)).text();
      expect(html).toContain('name="returnTo" value="/"');
    }
  });
});

describe("POST /sign-in", () => {
  it("signs in: a new session stored hashed, an HttpOnly SameSite=Lax cookie, back to returnTo", async () => {
    const b = new Browser();
    const res = await b.signIn(alice.email.toUpperCase(), alice.password, "/settings/connected-apps");
    expect(res.status).toBe(303);
    expect(res.headers.get("location")).toBe("/settings/connected-apps");
    const cookie = sessionCookie(res) ?? "";
    expect(cookie).toMatch(
      /^gt_session=gts_[A-Za-z0-9_-]{40}; Max-Age=1209600; Path=\/; HttpOnly; SameSite=Lax$/,
    );
    const token = b.cookies.get("gt_session") ?? "";
    const stored = await withDb((db) => db.select().from(sessions).where(eq(sessions.userId, alice.id)));
    expect(stored.map((s) => s.tokenHash)).toContain(await sha256Hex(token));
    expect(JSON.stringify(stored)).not.toContain(token);
    const home = await b.get("/");
    expect(home.status).toBe(200);
    const html = await home.text();
    expect(html).toContain(alice.email);
    expect(html).toContain("Sign-in Studio main");
  });

  it("sets the Secure attribute everywhere but on a loopback host", async () => {
    const b = new Browser(undefined, "https://app.telemetry.test");
    const res = await b.signIn(alice.email, alice.password);
    expect(res.status).toBe(303);
    expect(sessionCookie(res)).toContain("; Secure");
  });

  it("answers a wrong password and an unknown email alike, and sets no session", async () => {
    const wrong = await new Browser().signIn(alice.email, "not-the-password");
    const unknown = await new Browser().signIn("nobody@studio.test", "whatever-password");
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(sessionCookie(res)).toBeUndefined();
      const html = await res.text();
      expect(html).toContain(FAILED_HTML);
      // The form comes back with the email filled in, nothing else about the account.
      expect(html).toContain('<label for="password">Password</label>');
    }
  });

  it("refuses a post without the form's CSRF token, with another's, or from another origin", async () => {
    const b = new Browser();
    const html = await (await b.get("/sign-in")).text();
    const csrf = csrfOf(html);
    const creds = { email: alice.email, password: alice.password };
    const cases = [
      await b.post("/sign-in", creds),
      await b.post("/sign-in", { ...creds, csrf: "csrf_forged" }),
      await new Browser().post("/sign-in", { ...creds, csrf }),
      await b.post("/sign-in", { ...creds, csrf }, { Origin: "https://evil.example" }),
      await b.post("/sign-in", { ...creds, csrf }, { "Sec-Fetch-Site": "cross-site" }),
    ];
    for (const res of cases) {
      expect(res.status).toBe(403);
      expect(sessionCookie(res)).toBeUndefined();
    }
    expect((await b.post("/sign-in", { ...creds, csrf })).status).toBe(303);
  });

  it("refuses per (account, IP) with the same generic message, even for the right password; the owner on another IP signs in", async () => {
    const bob = await seedUser(t.tenantId);
    const attacker = "203.0.113.1";
    // The window already holds all but one of the allowed failures (filled directly in the real
    // limiter: each failure costs a full password derivation, too slow to repeat here).
    await fill((await signInBuckets(attacker, bob.email)).accountIpBucket, SIGN_IN_LIMITS.perAccountIp - 1);
    expect((await new Browser(attacker).signIn(bob.email, "wrong-password")).status).toBe(401);
    const res = await new Browser(attacker).signIn(bob.email, bob.password);
    expect(res.status).toBe(429);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await res.text()).toContain(FAILED_HTML);
    expect(sessionCookie(res)).toBeUndefined();
    // The lockout is the attacker's own: the owner, elsewhere, is not refused.
    expect((await new Browser("203.0.113.2").signIn(bob.email, bob.password)).status).toBe(303);
    // An unknown email is throttled exactly the same, so the limit reveals no account either.
    const ghost = "ghost@studio.test";
    await fill((await signInBuckets(attacker, ghost)).accountIpBucket, SIGN_IN_LIMITS.perAccountIp - 1);
    expect((await new Browser(attacker).signIn(ghost, "wrong-password")).status).toBe(401);
    const refused = await new Browser(attacker).signIn(ghost, "wrong-password");
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain(FAILED_HTML);
  });

  it("per account, failures from many IPs only slow sign-in down: the right password still signs in", async () => {
    const dana = await seedUser(t.tenantId);
    // Far past the slowdown threshold, as a guesser spread over many addresses would leave it.
    await fill(
      (await signInBuckets("-", dana.email)).accountBucket,
      SIGN_IN_LIMITS.perAccountBeforeSlowdown * 5,
    );
    expect((await new Browser("203.0.115.1").signIn(dana.email, "wrong-password")).status).toBe(401);
    expect((await new Browser("203.0.115.2").signIn(dana.email, dana.password)).status).toBe(303);
  });

  it("throttles failures per client IP across accounts; a success is refunded", async () => {
    const carol = await seedUser(t.tenantId);
    const ip = "203.0.113.77";
    const { ipBucket } = await signInBuckets(ip, carol.email);
    await fill(ipBucket, SIGN_IN_LIMITS.perIp - 2);
    // A success does not use up the window...
    expect((await new Browser(ip).signIn(carol.email, carol.password)).status).toBe(303);
    // ...so two more failures fit, and then the IP is refused, whatever the account.
    expect((await new Browser(ip).signIn("guess1@studio.test", "wrong-password")).status).toBe(401);
    expect((await new Browser(ip).signIn("guess2@studio.test", "wrong-password")).status).toBe(401);
    const res = await new Browser(ip).signIn(carol.email, carol.password);
    expect(res.status).toBe(429);
    expect(await res.text()).toContain(FAILED_HTML);
    // The account itself is fine from elsewhere.
    expect((await new Browser("203.0.113.78").signIn(carol.email, carol.password)).status).toBe(303);
  });
});

describe("sessions", () => {
  it("sign-out revokes the session server-side: the old cookie no longer signs in", async () => {
    const b = new Browser();
    await b.signIn(alice.email, alice.password);
    const token = b.cookies.get("gt_session") ?? "";
    const home = await b.get("/");
    const out = await b.post("/sign-out", { csrf: csrfOf(await home.text()) });
    expect(out.status).toBe(303);
    expect(out.headers.get("location")).toBe("/sign-in");
    expect(out.headers.getSetCookie().some((c) => c.startsWith("gt_session=;"))).toBe(true);
    const stored = await withDb(async (db) =>
      db
        .select()
        .from(sessions)
        .where(eq(sessions.tokenHash, await sha256Hex(token))),
    );
    expect(stored[0]?.revokedAt).toBeInstanceOf(Date);
    const replay = await SELF.fetch("http://127.0.0.1:8787/", {
      headers: { Cookie: `gt_session=${token}` },
      redirect: "manual",
    });
    expect(replay.status).toBe(307);
  });

  it("sign-out without the CSRF token is refused and the session lives on", async () => {
    const b = new Browser();
    await b.signIn(alice.email, alice.password);
    expect((await b.post("/sign-out", {})).status).toBe(403);
    expect((await b.get("/")).status).toBe(200);
  });

  it("an expired session is no session", async () => {
    const b = new Browser();
    await b.signIn(alice.email, alice.password);
    const token = b.cookies.get("gt_session") ?? "";
    await withDb(async (db) =>
      db
        .update(sessions)
        .set({ expiresAt: new Date(Date.now() - 1000) })
        .where(eq(sessions.tokenHash, await sha256Hex(token))),
    );
    const res = await b.get("/settings/connected-apps");
    expect(res.status).toBe(307);
    expect(res.headers.get("location")).toBe("/sign-in?returnTo=%2Fsettings%2Fconnected-apps");
  });

  it("a session cookie is the dashboard's credential under /api, until sign-out", async () => {
    const b = new Browser();
    await b.signIn(alice.email, alice.password);
    const cookie = `gt_session=${b.cookies.get("gt_session")}`;
    const list = await api("/v1/projects", {}, { headers: { Cookie: cookie } });
    expect(list.status).toBe(200);
    const projects = ((await list.json()) as OkBody<"/v1/projects">).data.map((p) => p.id);
    expect(projects).toContain(t.projectId);
    const status = await api(`/v1/projects/${t.projectId}/status`, {}, { headers: { Cookie: cookie } });
    expect(status.status).toBe(200);
    // Key validation is for keys only.
    expect((await api("/v1/whoami", {}, { headers: { Cookie: cookie } })).status).toBe(401);
    // An unknown path is a 404 problem, never a page's redirect.
    const missing = await api("/v1/nothing-here", {}, { headers: { Cookie: cookie } });
    expect(missing.status).toBe(404);
    expect(missing.headers.get("location")).toBeNull();
    // Sign-out ends it at once.
    expect((await b.submit("/", {}, "/sign-out")).status).toBe(303);
    const after = await api(`/v1/projects/${t.projectId}/status`, {}, { headers: { Cookie: cookie } });
    expect(after.status).toBe(401);
    expect((await problemOf(after)).detail).toBe("Your session has ended: sign in again.");
  });
});
