import { DurableObject } from "cloudflare:workers";

export type RateLimitResult = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the oldest counted request leaves the window (remaining grows again). */
  reset: number;
  /** Seconds until a request of the same cost would be allowed; 0 when allowed. */
  retryAfter: number;
};

export type BudgetResult = { allowed: boolean; used: number; limit: number | null; retryAfter: number };

/**
 * What a credential cache compares against (workers/shared/credentials/cache.ts): the bucket's credentials
 * generation, bumped whenever a credential, plan or project charged to this bucket changes, and when
 * (Unix ms) that last happened. `result` is null when the caller's generation was stale: nothing was
 * counted, and the caller must look the credential up again.
 */
export type CheckedCharge = { generation: number; changedAt: number; result: RateLimitResult | null };

/**
 * One instance per bucket name (tenant API quota, whoami bucket, client IP, project ingest rate,
 * tenant monthly event budget). Sliding windows are exact to the second: requests are counted in
 * per-second buckets, held in memory and persisted in the object's SQLite storage so an eviction
 * forgets nothing. The buckets are written behind, by an alarm at most FLUSH_MS after a charge, not by
 * each charge: a SQLite write per request was the largest cost of every API request (about 0.85 ms of
 * workerd CPU of 2.9 on `bench:api`'s GET /v1/projects, issue 41). An object is evicted only after
 * seconds of idleness, long after its alarm has written the buckets; a crash of the runtime in between
 * loses at most the last FLUSH_MS of counts, which undercounts and never refuses a request wrongly.
 */
/** How long counted seconds may wait in memory before the alarm writes them. */
export const FLUSH_MS = 1000;

export class RateLimiter extends DurableObject<Env> {
  private buckets = new Map<number, number>();
  /** Seconds whose count changed since the last flush. */
  private dirty = new Set<number>();
  private flushPending = false;
  private budgetUsed = 0;
  private generation = 0;
  private changedAt = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS buckets (second INTEGER PRIMARY KEY, count INTEGER NOT NULL)");
    sql.exec(
      "CREATE TABLE IF NOT EXISTS budget (id INTEGER PRIMARY KEY CHECK (id = 1), used INTEGER NOT NULL)",
    );
    for (const row of sql.exec<{ second: number; count: number }>("SELECT second, count FROM buckets")) {
      this.buckets.set(row.second, row.count);
    }
    for (const row of sql.exec<{ used: number }>("SELECT used FROM budget")) {
      this.budgetUsed = row.used;
    }
    // Persisted, so an eviction cannot hand a cache a generation it already saw before a change.
    sql.exec(
      "CREATE TABLE IF NOT EXISTS generation (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL, changed_at INTEGER NOT NULL)",
    );
    for (const row of sql.exec<{ value: number; changed_at: number }>(
      "SELECT value, changed_at FROM generation",
    )) {
      this.generation = row.value;
      this.changedAt = row.changed_at;
    }
  }

  /**
   * chargeWindow() for a caller that holds a cached principal resolved at generation `expected`: counted only when
   * that is still this bucket's generation (or `expected` is null: a principal just read from Postgres).
   * One round trip does both the freshness check and the count.
   */
  chargeWindowIfCurrent(
    expected: number | null,
    limit: number,
    windowSeconds: number,
    cost = 1,
  ): CheckedCharge {
    const base = { generation: this.generation, changedAt: this.changedAt };
    if (expected !== null && expected !== this.generation) {
      return { ...base, result: null };
    }
    return { ...base, result: this.chargeWindow(limit, windowSeconds, cost) };
  }

  /** A credential, plan or project charged to this bucket changed: every cached principal is stale. */
  bump(nowMs = Date.now()): number {
    this.generation += 1;
    this.changedAt = nowMs;
    this.ctx.storage.sql.exec(
      "INSERT INTO generation (id, value, changed_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value, changed_at = excluded.changed_at",
      this.generation,
      this.changedAt,
    );
    return this.generation;
  }

  /** Counts `cost` requests now if the window allows them; a denied request is not counted. */
  chargeWindow(limit: number, windowSeconds: number, cost = 1, nowMs = Date.now()): RateLimitResult {
    const now = Math.floor(nowMs / 1000);
    this.prune(now - windowSeconds);
    let used = 0;
    for (const count of this.buckets.values()) {
      used += count;
    }
    const allowed = used + cost <= limit;
    if (allowed) {
      this.buckets.set(now, (this.buckets.get(now) ?? 0) + cost);
      this.dirty.add(now);
      this.scheduleFlush();
      used += cost;
    }
    const oldest = this.buckets.size > 0 ? Math.min(...this.buckets.keys()) : now;
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - used),
      reset: oldest + windowSeconds,
      retryAfter: allowed ? 0 : this.secondsUntilFree(used + cost - limit, now, windowSeconds),
    };
  }

  /** Adds `amount` to a budget (one object per tenant and month) unless it would exceed `limit`. */
  chargeBudget(limit: number | null, amount: number, periodEndMs: number, nowMs = Date.now()): BudgetResult {
    const allowed = limit === null || this.budgetUsed + amount <= limit;
    if (allowed) {
      this.budgetUsed += amount;
      this.ctx.storage.sql.exec(
        "INSERT INTO budget (id, used) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET used = excluded.used",
        this.budgetUsed,
      );
    }
    const retryAfter = allowed ? 0 : Math.max(1, Math.ceil((periodEndMs - nowMs) / 1000));
    return { allowed, used: this.budgetUsed, limit, retryAfter };
  }

  /** The alarm: writes the counted seconds (scheduleFlush). */
  override async alarm(): Promise<void> {
    this.flush();
  }

  /** Writes the seconds counted since the last flush, in one transaction. */
  flush(): void {
    this.flushPending = false;
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      for (const second of this.dirty) {
        const count = this.buckets.get(second);
        if (count !== undefined) {
          sql.exec(
            "INSERT INTO buckets (second, count) VALUES (?, ?) ON CONFLICT (second) DO UPDATE SET count = excluded.count",
            second,
            count,
          );
        }
      }
    });
    this.dirty.clear();
  }

  private scheduleFlush(): void {
    if (!this.flushPending) {
      this.flushPending = true;
      void this.ctx.storage.setAlarm(Date.now() + FLUSH_MS);
    }
  }

  private prune(oldestExcluded: number): void {
    let pruned = false;
    for (const second of this.buckets.keys()) {
      if (second <= oldestExcluded) {
        this.buckets.delete(second);
        pruned = true;
      }
    }
    if (pruned) {
      this.ctx.storage.sql.exec("DELETE FROM buckets WHERE second <= ?", oldestExcluded);
    }
  }

  /** The wait until the oldest buckets holding `excess` requests have slid out of the window. */
  private secondsUntilFree(excess: number, now: number, windowSeconds: number): number {
    const seconds = [...this.buckets.keys()].sort((a, b) => a - b);
    let freed = 0;
    for (const second of seconds) {
      freed += this.buckets.get(second) ?? 0;
      if (freed >= excess) {
        return Math.max(1, second + windowSeconds - now);
      }
    }
    // Cost larger than the whole limit: it can never pass; say a full window.
    return windowSeconds;
  }
}
