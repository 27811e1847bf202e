import { expect } from "vitest";
import { createUser } from "../../workers/api/accounts/users.js";
import { BASE, withDb } from "./harness.js";
import { workerFetch } from "./worker-fetch.js";

/**
 * A browser's side of the pages, through the Worker: a cookie jar, same-origin form posts carrying
 * the page's CSRF token, and no redirect following (tests read each hop).
 */
export class Browser {
  readonly cookies = new Map<string, string>();

  constructor(
    readonly ip = `198.51.100.${Math.floor(Math.random() * 250) + 1}`,
    readonly origin = BASE,
  ) {}

  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) {
      headers.set("Cookie", [...this.cookies].map(([k, v]) => `${k}=${v}`).join("; "));
    }
    headers.set("CF-Connecting-IP", this.ip);
    const url = path.startsWith("http") ? path : `${this.origin}${path}`;
    const res = await workerFetch(url, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair = "", ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || value === "";
      if (expired) {
        this.cookies.delete(name);
      } else {
        this.cookies.set(name, value);
      }
    }
    return res;
  }

  get(path: string): Promise<Response> {
    return this.fetch(path);
  }

  /** A form post as the browser sends it: urlencoded, with the page's Origin. */
  post(
    path: string,
    fields: Record<string, string>,
    headers: Record<string, string> = {},
  ): Promise<Response> {
    return this.fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: this.origin, ...headers },
      body: new URLSearchParams(fields).toString(),
    });
  }

  /** GETs a page and submits its form `action` with the page's CSRF token and the given fields. */
  async submit(pagePath: string, fields: Record<string, string>, action?: string): Promise<Response> {
    const page = await this.get(pagePath);
    expect(page.status, `GET ${pagePath}`).toBe(200);
    const html = await page.text();
    return this.post(action ?? pagePath, { csrf: csrfOf(html), ...fields });
  }

  async signIn(email: string, password: string, returnTo = "/"): Promise<Response> {
    const path = `/sign-in?returnTo=${encodeURIComponent(returnTo)}`;
    return this.submit(path, { email, password, returnTo }, "/sign-in");
  }
}

export function csrfOf(html: string): string {
  const m = /name="csrf" value="([^"]+)"/.exec(html);
  if (!m?.[1]) {
    throw new Error("no CSRF token on the page");
  }
  return m[1];
}

/** Hidden inputs of a form as the browser would send them (HTML entities of our escaper undone). */
export function hiddenFields(html: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    out[m[1] ?? ""] = unescapeHtml(m[2] ?? "");
  }
  return out;
}

export function unescapeHtml(s: string): string {
  return s
    .replaceAll("&quot;", '"')
    .replaceAll("&#39;", "'")
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">")
    .replaceAll("&amp;", "&");
}

let userCounter = 0;

/** A user of the tenant, with a unique email; the password is returned for signing in. */
export async function seedUser(
  tenantId: string,
  role: "owner" | "member" = "owner",
): Promise<{ id: string; email: string; password: string }> {
  userCounter += 1;
  const email = `user${userCounter}-${crypto.randomUUID().slice(0, 8)}@studio.test`;
  const password = `pw-${crypto.randomUUID()}`;
  const { id } = await withDb((db) => createUser(db, { tenantId, email, password, role }));
  return { id, email, password };
}
