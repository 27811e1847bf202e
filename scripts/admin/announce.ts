// The admin CLI's side of the operator route (workers/api/credentials/operator.ts): after a change is
// committed in Postgres, tell the API Worker, which bumps the RateLimiter generations the credential
// caches of both Workers are confirmed against, so the change applies from the next request.

import { OPERATOR_CHANGES_PATH } from "../../workers/api/credentials/operator.js";
import type { CredentialChange } from "../../workers/shared/credentials/cache.js";

/** The operator secret `npm run dev` gives the API Worker (scripts/local/wrangler.ts). */
export const LOCAL_OPERATOR_SECRET = "local-operator-secret-for-npm-run-dev-only";

export type AnnounceTarget = {
  /** The API Worker's origin. */
  url: string;
  secret: string;
  /** fetch, or a Worker binding's (the tests reach the Worker through one). */
  fetch?: (request: Request) => Promise<Response>;
};

/**
 * OPERATOR_API_URL and OPERATOR_SECRET from the environment, else the local stack's: `localUrl` is the
 * origin the running `npm run dev` wrote into its data dir (scripts/local/database.ts: runningStack).
 */
export function targetFromEnv(env: NodeJS.ProcessEnv, localUrl: string | undefined): AnnounceTarget {
  const url = env.OPERATOR_API_URL || localUrl;
  if (!url) {
    throw new AnnounceFailed(
      "no stack to tell: `npm run dev` is not running on this data dir (PORT picks it) and OPERATOR_API_URL is unset",
    );
  }
  return { url, secret: env.OPERATOR_SECRET || LOCAL_OPERATOR_SECRET };
}

export class AnnounceFailed extends Error {}

/** Statuses a restarting or overloaded Worker answers with; the announcement is tried again on them. */
const TRANSIENT = new Set([502, 503, 504]);
/** Waits before the second and third tries: a Worker that restarted mid-request answers within a second. */
const RETRY_DELAYS_MS = [500, 2_000];

/**
 * Announces a committed change; throws AnnounceFailed, saying why, when the Worker did not confirm it.
 * An unreachable Worker or a 502/503/504 is tried again twice: announcing twice only bumps the
 * generations twice, which the caches read as one change.
 */
export async function announce(target: AnnounceTarget, change: CredentialChange): Promise<void> {
  const url = new URL(OPERATOR_CHANGES_PATH, target.url);
  for (let attempt = 0; ; attempt++) {
    const failure = await announceOnce(target, url, change);
    if (!failure) {
      return;
    }
    const delay = RETRY_DELAYS_MS[attempt];
    if (!failure.transient || delay === undefined) {
      throw new AnnounceFailed(failure.message);
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

async function announceOnce(
  target: AnnounceTarget,
  url: URL,
  change: CredentialChange,
): Promise<{ message: string; transient: boolean } | null> {
  const request = new Request(url, {
    method: "POST",
    headers: { Authorization: `Bearer ${target.secret}`, "Content-Type": "application/json" },
    body: JSON.stringify(change),
  });
  let res: Response;
  try {
    res = await (target.fetch ?? fetch)(request);
  } catch (err) {
    return {
      message: `${url.origin} unreachable (${err instanceof Error ? err.message : String(err)})`,
      transient: true,
    };
  }
  if (!res.ok) {
    const body = await res.text().catch(() => "");
    const detail = /"detail":"([^"]*)"/.exec(body)?.[1] ?? (body.slice(0, 200) || res.statusText);
    return {
      message: `${url.origin} answered ${res.status}: ${detail}`,
      transient: TRANSIENT.has(res.status),
    };
  }
  await res.body?.cancel();
  return null;
}
