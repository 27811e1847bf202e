import { describe, expect, it } from "vitest";
import { CredentialCache } from "../../workers/shared/credentials/cache.js";

type P = { tenantId: string };
const bucketOf = (p: P) => `tenant:${p.tenantId}`;
const T0 = 1_700_000_000_000;
const TTL = 15_000;

describe("CredentialCache", () => {
  it("keeps a principal for the TTL, with the generation it was confirmed at", () => {
    const cache = new CredentialCache<P>();
    cache.remember(
      "key:h1",
      { tenantId: "a" },
      "tenant:a",
      { generation: 3, changedAt: 0, result: null },
      T0,
      TTL,
      undefined,
      T0,
    );
    expect(cache.lookup("key:h1", bucketOf, T0 + TTL - 1)).toEqual({
      principal: { tenantId: "a" },
      bucket: "tenant:a",
      expected: 3,
      expired: false,
    });
    // Past the TTL it is still there, marked expired: served only while Postgres cannot answer.
    expect(cache.lookup("key:h1", bucketOf, T0 + TTL)).toEqual({
      principal: { tenantId: "a" },
      bucket: "tenant:a",
      expected: 3,
      expired: true,
    });
  });

  it("does not keep a principal whose bucket changed around the time it was read", () => {
    const cache = new CredentialCache<P>();
    const changed = { generation: 4, changedAt: T0 - 500, result: null };
    cache.remember("key:h1", { tenantId: "a" }, "tenant:a", changed, T0, TTL, undefined, T0);
    expect(cache.lookup("key:h1", bucketOf, T0)).toBeUndefined();
    // Long enough before the read (beyond any clock difference), it is kept.
    const settled = { generation: 4, changedAt: T0 - 60_000, result: null };
    cache.remember("key:h1", { tenantId: "a" }, "tenant:a", settled, T0, TTL, undefined, T0);
    expect(cache.lookup("key:h1", bucketOf, T0)?.expected).toBe(4);
  });

  it("a principal not yet confirmed through a bucket has no generation there (the caller reads Postgres)", () => {
    const cache = new CredentialCache<P>();
    cache.remember(
      "key:h1",
      { tenantId: "a" },
      "tenant:a",
      { generation: 1, changedAt: 0, result: null },
      T0,
      TTL,
      undefined,
      T0,
    );
    expect(cache.lookup("key:h1", (p) => `whoami:${p.tenantId}`, T0)?.expected).toBeUndefined();
    cache.remember(
      "key:h1",
      { tenantId: "a" },
      "whoami:a",
      { generation: 7, changedAt: 0, result: null },
      T0,
      TTL,
      undefined,
      T0,
    );
    expect(cache.lookup("key:h1", (p) => `whoami:${p.tenantId}`, T0)?.expected).toBe(7);
    expect(cache.lookup("key:h1", bucketOf, T0)?.expected).toBe(1);
  });

  it("expires at notAfter (a token's expiry), and a TTL of 0 caches nothing", () => {
    const cache = new CredentialCache<P>();
    const checked = { generation: 0, changedAt: 0, result: null };
    cache.remember("token:h2", { tenantId: "a" }, "tenant:a", checked, T0, TTL, T0 + 1000, T0);
    expect(cache.lookup("token:h2", bucketOf, T0 + 999)?.expired).toBe(false);
    expect(cache.lookup("token:h2", bucketOf, T0 + 1000)?.expired).toBe(true);
    cache.remember("key:h3", { tenantId: "a" }, "tenant:a", checked, T0, 0, undefined, T0);
    expect(cache.lookup("key:h3", bucketOf, T0)).toBeUndefined();
  });
});
