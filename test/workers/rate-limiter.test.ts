import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../../durable-objects/rate-limiter.js";

function stub(name: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
}

const T0 = 1_800_000_000_000; // a fixed instant, so the window arithmetic is exact

describe("RateLimiter: sliding hourly window, exact to the second", () => {
  it("counts, refuses without counting, and frees each request exactly one window after it", async () => {
    await runInDurableObject(stub("unit:sliding"), (limiter: RateLimiter) => {
      expect(limiter.chargeWindow(3, 3600, 1, T0)).toEqual({
        allowed: true,
        limit: 3,
        remaining: 2,
        reset: T0 / 1000 + 3600,
        retryAfter: 0,
      });
      limiter.chargeWindow(3, 3600, 1, T0 + 10_000);
      limiter.chargeWindow(3, 3600, 1, T0 + 20_000);
      const refused = limiter.chargeWindow(3, 3600, 1, T0 + 30_000);
      expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfter: 3600 - 30 });
      // One second before the first request leaves the window: still refused, and not counted.
      expect(limiter.chargeWindow(3, 3600, 1, T0 + 3_599_000).allowed).toBe(false);
      // Exactly when it leaves: allowed.
      const freed = limiter.chargeWindow(3, 3600, 1, T0 + 3_600_000);
      expect(freed).toMatchObject({ allowed: true, remaining: 0, reset: T0 / 1000 + 10 + 3600 });
    });
  });

  it("a request costing more than one needs that many to leave the window", async () => {
    await runInDurableObject(stub("unit:cost"), (limiter: RateLimiter) => {
      limiter.chargeWindow(10, 3600, 4, T0);
      limiter.chargeWindow(10, 3600, 4, T0 + 100_000);
      const refused = limiter.chargeWindow(10, 3600, 5, T0 + 200_000);
      // 8 used; 5 more needs 3 freed: the first bucket (4) leaves at T0+3600 s.
      expect(refused).toMatchObject({ allowed: false, remaining: 2, retryAfter: 3600 - 200 });
    });
  });

  it("keeps its counts across a restart of the object (SQLite storage)", async () => {
    const s = stub("unit:persist");
    await s.chargeWindow(5, 3600, 4);
    // Counted at once, written behind by the object's alarm (not by each charge).
    expect((await s.chargeWindow(5, 3600, 0)).remaining).toBe(1);
    expect(await runDurableObjectAlarm(s)).toBe(true);
    await runInDurableObject(s, async (_instance, state) => {
      const rows = state.storage.sql
        .exec<{ total: number }>("SELECT sum(count) AS total FROM buckets")
        .toArray();
      expect(rows[0]?.total).toBe(4);
    });
    // A new instance over the same storage reads the buckets back.
    await runInDurableObject(s, (_instance, state) => {
      const fresh = new (Object.getPrototypeOf(_instance).constructor)(state, env) as RateLimiter;
      expect(fresh.chargeWindow(5, 3600, 1).remaining).toBe(0);
      expect(fresh.chargeWindow(5, 3600, 1).allowed).toBe(false);
    });
  });

  it("monthly budgets charge by amount, refuse beyond the limit and never for unlimited plans", async () => {
    await runInDurableObject(stub("unit:budget"), (limiter: RateLimiter) => {
      const end = T0 + 86_400_000;
      expect(limiter.chargeBudget(100, 60, end, T0)).toEqual({
        allowed: true,
        used: 60,
        limit: 100,
        retryAfter: 0,
      });
      expect(limiter.chargeBudget(100, 41, end, T0)).toEqual({
        allowed: false,
        used: 60,
        limit: 100,
        retryAfter: 86_400,
      });
      expect(limiter.chargeBudget(100, 40, end, T0).used).toBe(100);
      expect(limiter.chargeBudget(null, 1_000_000, end, T0)).toMatchObject({
        allowed: true,
        used: 1_000_100,
      });
    });
  });
});
