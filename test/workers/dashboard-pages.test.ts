import { beforeAll, describe, expect, it } from "vitest";
import {
  DASHBOARD_CHUNKS,
  DASHBOARD_CSS,
  DASHBOARD_HASH,
  DASHBOARD_JS,
} from "../../workers/api/web/assets/bundle.gen.js";
import { DASHBOARD_PAGES, pageScope, SCRIPT_PATH, STYLE_PATH } from "../../workers/api/web/dashboard.js";
import { Browser, seedUser } from "../support/browser.js";
import { seedTenant, type Tenant } from "../support/harness.js";

// The dashboard's shells and bundle as the Worker serves them: what the browser tests rely on, and the
// headers that keep scripts to this origin's bundle only.

let t: Tenant;
let b: Browser;
beforeAll(async () => {
  t = await seedTenant("pro", "Shell Studio");
  const user = await seedUser(t.tenantId, "member");
  b = new Browser();
  expect((await b.signIn(user.email, user.password)).status).toBe(303);
});

// The user is a member: the pages that need a scope a member lacks (SQL: data:admin) are the security
// table's (test/workers/security.test.ts: 403 and no link); every other page is here.
const MEMBER_PAGES = DASHBOARD_PAGES.filter((p) => pageScope(p.id) === undefined);

describe("a project page's shell", () => {
  it.each(MEMBER_PAGES.map((p) => p.id))(
    "%s: the mount point, navigation, bundle and a scripts-from-here CSP",
    async (id) => {
      const res = await b.get(`/projects/${t.projectId}/${id}`);
      expect(res.status).toBe(200);
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-eval");
      expect(res.headers.get("cache-control")).toBe("no-store");
      const html = await res.text();
      expect(html).toContain(`<div id="page" data-page="${id}" data-project-id="${t.projectId}">`);
      expect(html).toContain(`<script type="module" src="${SCRIPT_PATH}"></script>`);
      for (const p of MEMBER_PAGES) {
        expect(html).toContain(`href="/projects/${t.projectId}/${p.id}"`);
      }
      expect(html).toContain(`href="/settings/projects/${t.projectId}/api-keys">Settings</a>`);
      expect(html).toContain('action="/sign-out"');
      expect(html).toMatch(new RegExp(`href="/projects/${t.projectId}/${id}" aria-current="page"`));
    },
  );

  it("/projects/:id goes to the overview; an unknown page is a 404 page", async () => {
    const res = await b.get(`/projects/${t.projectId}`);
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`/projects/${t.projectId}/overview`);
    expect((await b.get(`/projects/${t.projectId}/nothing`)).status).toBe(404);
  });

  it("other pages still allow no scripts; images from this origin only (the favicon)", async () => {
    const res = await b.get("/settings/connected-apps");
    expect(res.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    expect(await res.text()).toContain('<link rel="icon" href="/favicon.svg" type="image/svg+xml" />');
  });
});

describe("the bundle", () => {
  it("is served at its hashed URLs, cacheable for good, to anyone (it holds code, no data)", async () => {
    expect(SCRIPT_PATH).toBe(`/assets/dashboard-${DASHBOARD_HASH}.js`);
    const js = await new Browser().get(SCRIPT_PATH);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await js.text()).toBe(DASHBOARD_JS);
    const css = await new Browser().get(STYLE_PATH);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await css.text()).toBe(DASHBOARD_CSS);
    // Another hash is no asset: the signed-out 307 like any unknown page.
    expect((await new Browser().get("/assets/dashboard-0000000000000000.js")).status).toBe(307);
  });

  it("serves the chunks the entry imports (lazily loaded pages) beside it, cacheable for good", async () => {
    const importsOf = (js: string) =>
      [...js.matchAll(/"\.\/(chunk-[A-Za-z0-9_-]+\.js)"/g)].map((m) => m[1] as string);
    // Every chunk is reached from the entry, directly or through another chunk, and none is missing.
    const reached = new Set<string>();
    const visit = (js: string) => {
      for (const chunk of importsOf(js)) {
        if (!reached.has(chunk)) {
          reached.add(chunk);
          visit(DASHBOARD_CHUNKS[chunk] ?? "");
        }
      }
    };
    visit(DASHBOARD_JS);
    expect([...reached].sort()).toEqual(Object.keys(DASHBOARD_CHUNKS).sort());
    expect(reached.size).toBeGreaterThanOrEqual(3);
    for (const chunk of reached) {
      const res = await new Browser().get(`/assets/${chunk}`);
      expect(res.status, chunk).toBe(200);
      expect(res.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(await res.text()).toBe(DASHBOARD_CHUNKS[chunk]);
    }
    expect((await new Browser().get("/assets/chunk-UNKNOWN0.js")).status).toBe(307);
  });
});

describe("the favicon", () => {
  it("is served to anyone, cached, as SVG (linked by every page) and as /favicon.ico", async () => {
    const svg = await new Browser().get("/favicon.svg");
    expect(svg.status).toBe(200);
    expect(svg.headers.get("content-type")).toBe("image/svg+xml");
    expect(svg.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(svg.headers.getSetCookie()).toEqual([]);
    expect(await svg.text()).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" viewBox="0 0 32 32">/);
    const ico = await new Browser().get("/favicon.ico");
    expect(ico.status).toBe(200);
    expect(ico.headers.get("content-type")).toBe("image/x-icon");
    expect(ico.headers.get("cache-control")).toBe("public, max-age=86400");
    const bytes = new Uint8Array(await ico.arrayBuffer());
    // ICO header (reserved 0, type 1 = icon, one image of 32x32), then the PNG it points at.
    expect([...bytes.slice(0, 8)]).toEqual([0, 0, 1, 0, 1, 0, 32, 32]);
    const offset = new DataView(bytes.buffer).getUint32(18, true);
    expect([...bytes.slice(offset, offset + 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    expect(new DataView(bytes.buffer).getUint32(14, true)).toBe(bytes.length - offset);
  });
});
