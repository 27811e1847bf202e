import { sha256Hex } from "../../shared/credentials/secrets.js";
import { buckets, limiter } from "../../shared/rate-limit.js";
import { normalizeEmail } from "./users.js";

// Sign-in throttling on the RateLimiter Durable Object's sliding window. Every attempt is charged
// before the password is checked (so parallel guesses cannot slip past the count) and a successful one
// is refunded: only failures use up the window. An account is counted by its email whether or not it
// exists, so the limit itself tells nothing about which accounts exist.
export const SIGN_IN_LIMITS = {
  /** Failed attempts per client IP in the window. */
  perIp: 30,
  /** Failed attempts per account (email) in the window, from any IP. */
  perAccount: 10,
  windowSeconds: 15 * 60,
} as const;

export type SignInCharge = { allowed: boolean; retryAfter: number; refund: () => Promise<void> };

/** The RateLimiter objects counting one IP's and one account's failures. */
export async function signInBuckets(ip: string, email: string) {
  return {
    ipBucket: buckets.signInIp(ip),
    accountBucket: buckets.signInAccount(await sha256Hex(normalizeEmail(email))),
  };
}

export async function chargeSignIn(env: Env, ip: string, email: string): Promise<SignInCharge> {
  const { ipBucket, accountBucket } = await signInBuckets(ip, email);
  const { perIp, perAccount, windowSeconds } = SIGN_IN_LIMITS;
  const byIp = await limiter(env, ipBucket).hit(perIp, windowSeconds);
  if (!byIp.allowed) {
    return { allowed: false, retryAfter: byIp.retryAfter, refund: async () => {} };
  }
  const byAccount = await limiter(env, accountBucket).hit(perAccount, windowSeconds);
  return {
    allowed: byAccount.allowed,
    retryAfter: byAccount.retryAfter,
    refund: async () => {
      await limiter(env, ipBucket).hit(perIp, windowSeconds, -1);
      if (byAccount.allowed) {
        await limiter(env, accountBucket).hit(perAccount, windowSeconds, -1);
      }
    },
  };
}
