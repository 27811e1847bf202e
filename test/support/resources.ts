import { expect } from "vitest";
import { type Auth, api, problemOf } from "./http.js";

/** A JSON request through the Worker; `body` may be a pre-serialized string (e.g. to send 1e400). */
export function sendJson(
  method: string,
  path: string,
  auth: Auth,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return api(path, auth, {
    method,
    headers: { "Content-Type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** The data of a success envelope, after checking the status. */
export async function dataOf<T = Record<string, unknown>>(res: Response, status = 200): Promise<T> {
  const body = (await res.json()) as { success: boolean; data: T };
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(body.success).toBe(true);
  return body.data;
}

/** A 400 whose `field` member and detail name `field`; returns the detail. */
export async function expectBadField(res: Response, field: string): Promise<string> {
  expect(res.status).toBe(400);
  const p = await problemOf(res);
  expect(p.field).toBe(field);
  expect(p.detail.startsWith(`${field}: `)).toBe(true);
  return p.detail;
}
