import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { AlertCooldown } from "../../durable-objects/alert-cooldown.js";

describe("AlertCooldown", () => {
  it("allows the first notification, refuses within cooldownMinutes, allows again after", async () => {
    const stub = env.ALERT_COOLDOWN.get(env.ALERT_COOLDOWN.idFromName(`rule:${crypto.randomUUID()}`));
    const t0 = Date.UTC(2026, 0, 1);
    await runInDurableObject(stub, (cooldown: AlertCooldown) => {
      expect(cooldown.claim(60, t0)).toEqual({ allowed: true, lastNotifiedAt: null });
      expect(cooldown.claim(60, t0 + 59 * 60_000)).toEqual({ allowed: false, lastNotifiedAt: t0 });
      expect(cooldown.claim(60, t0 + 60 * 60_000)).toEqual({ allowed: true, lastNotifiedAt: t0 });
      // A claim whose notifications never reached the queue is undone.
      cooldown.release(t0);
      expect(cooldown.claim(60, t0 + 61 * 60_000)).toEqual({ allowed: true, lastNotifiedAt: t0 });
      // Zero minutes: every change to triggered notifies.
      expect(cooldown.claim(0, t0 + 61 * 60_000)).toEqual({
        allowed: true,
        lastNotifiedAt: t0 + 61 * 60_000,
      });
    });
    // The state survives in SQLite storage, not only in memory.
    expect(await stub.claim(60, t0 + 62 * 60_000)).toEqual({
      allowed: false,
      lastNotifiedAt: t0 + 61 * 60_000,
    });
  });
});
