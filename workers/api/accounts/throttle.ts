import { sha256Hex } from "../../shared/credentials/secrets.js";
import { buckets, limiter } from "../../shared/rate-limit.js";
import { normalizeEmail } from "./users.js";

// Sign-in throttling on the RateLimiter Durable Object's sliding window. Every attempt is charged
// before the password is checked (so parallel guesses cannot slip past the count) and a successful one
// is refunded: only failures use up the window. An account is counted by its email whether or not it
// exists, so the limit itself tells nothing about which accounts exist.
//
// Refusals count per client IP and per (account, IP): a stranger who floods someone's email with wrong
// passwords locks out only their own address. Per account alone there is no refusal, only a slowdown:
// past `perAccountBeforeSlowdown` failures from all addresses, every attempt on the account waits
// `slowdownMs` before its password is checked. That bounds a guesser spread over many addresses (who
// already gets `perAccountIp` tries from each) without ever refusing the owner's right password.
export const SIGN_IN_LIMITS = {
  /** Failed attempts per client IP in the window, over all accounts. */
  perIp: 30,
  /** Failed attempts per account from one client IP in the window. */
  perAccountIp: 10,
  /** Failed attempts per account, from any IP, before each attempt is slowed down. */
  perAccountBeforeSlowdown: 10,
  slowdownMs: 2_000,
  windowSeconds: 15 * 60,
} as const;

/** What the per-account counter holds at most: it only counts, it never refuses. */
const ACCOUNT_COUNT_CAP = 1_000_000;

export type SignInCharge = {
  allowed: boolean;
  retryAfter: number;
  /** How long this attempt waits before the password is checked (0 unless the account is under attack). */
  delayMs: number;
  refund: () => Promise<void>;
};

/** The RateLimiter objects counting one IP's, one (account, IP)'s and one account's failures. */
export async function signInBuckets(ip: string, email: string) {
  const account = await sha256Hex(normalizeEmail(email));
  return {
    ipBucket: buckets.signInIp(ip),
    accountIpBucket: buckets.signInAccountIp(account, ip),
    accountBucket: buckets.signInAccount(account),
  };
}

export async function chargeSignIn(env: Env, ip: string, email: string): Promise<SignInCharge> {
  const { ipBucket, accountIpBucket, accountBucket } = await signInBuckets(ip, email);
  const { perIp, perAccountIp, perAccountBeforeSlowdown, slowdownMs, windowSeconds } = SIGN_IN_LIMITS;
  const none = async () => {};
  const byIp = await limiter(env, ipBucket).chargeWindow(perIp, windowSeconds);
  if (!byIp.allowed) {
    return { allowed: false, retryAfter: byIp.retryAfter, delayMs: 0, refund: none };
  }
  const byAccountIp = await limiter(env, accountIpBucket).chargeWindow(perAccountIp, windowSeconds);
  if (!byAccountIp.allowed) {
    await limiter(env, ipBucket).chargeWindow(perIp, windowSeconds, -1);
    return { allowed: false, retryAfter: byAccountIp.retryAfter, delayMs: 0, refund: none };
  }
  const byAccount = await limiter(env, accountBucket).chargeWindow(ACCOUNT_COUNT_CAP, windowSeconds);
  const failures = ACCOUNT_COUNT_CAP - byAccount.remaining - 1;
  return {
    allowed: true,
    retryAfter: 0,
    delayMs: failures >= perAccountBeforeSlowdown ? slowdownMs : 0,
    refund: async () => {
      await limiter(env, ipBucket).chargeWindow(perIp, windowSeconds, -1);
      await limiter(env, accountIpBucket).chargeWindow(perAccountIp, windowSeconds, -1);
      if (byAccount.allowed) {
        await limiter(env, accountBucket).chargeWindow(ACCOUNT_COUNT_CAP, windowSeconds, -1);
      }
    },
  };
}
