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
    // Claimed for an evaluation event: the same event claiming again gets its first answer, no new stamp.
    await runInDurableObject(stub, (cooldown: AlertCooldown) => {
      const first = cooldown.claim(0, t0 + 61 * 60_000 + 1, "event-1");
      expect(first).toEqual({ allowed: true, lastNotifiedAt: t0 + 61 * 60_000 });
      expect(cooldown.claim(0, t0 + 90 * 60_000, "event-1")).toEqual(first);
      expect(cooldown.claim(60, t0 + 61 * 60_000 + 2, "event-2")).toEqual({
        allowed: false,
        lastNotifiedAt: t0 + 61 * 60_000 + 1,
      });
      expect(cooldown.claim(60, t0 + 200 * 60_000, "event-2").allowed).toBe(false);
      // Undone before its event was recorded: stamp and remembered answer both go.
      cooldown.release(t0 + 61 * 60_000, "event-1");
      cooldown.release(t0 + 61 * 60_000, "event-2");
    });
    // The state survives in SQLite storage, not only in memory.
    expect(await stub.claim(60, t0 + 62 * 60_000)).toEqual({
      allowed: false,
      lastNotifiedAt: t0 + 61 * 60_000,
    });
  });

  it("posts each (event, channel) once: a second copy waits while the first posts, and is dropped after", async () => {
    const stub = env.ALERT_COOLDOWN.get(env.ALERT_COOLDOWN.idFromName(`rule:${crypto.randomUUID()}`));
    const t0 = Date.UTC(2026, 0, 1);
    expect(await stub.claimDelivery("e", "c1", t0)).toBe("go");
    expect(await stub.claimDelivery("e", "c1", t0 + 1000)).toBe("busy");
    // Another channel of the same event is its own delivery.
    expect(await stub.claimDelivery("e", "c2", t0 + 1000)).toBe("go");
    // A failed post frees it for the retry; a delivered one is done for good.
    await stub.finishDelivery("e", "c2", false);
    expect(await stub.claimDelivery("e", "c2", t0 + 2000)).toBe("go");
    await stub.finishDelivery("e", "c1", true);
    expect(await stub.claimDelivery("e", "c1", t0 + 3000)).toBe("done");
    // A holder that died: its claim is taken over after a minute.
    expect(await stub.claimDelivery("e", "c2", t0 + 2000 + 59_000)).toBe("busy");
    expect(await stub.claimDelivery("e", "c2", t0 + 2000 + 61_000)).toBe("go");
  });
});
