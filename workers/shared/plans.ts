// Plans live here and nowhere else. `null` means unlimited.
export const PLAN_IDS = ["free", "pro", "studio", "enterprise"] as const;
export type PlanId = (typeof PLAN_IDS)[number];

export type Plan = {
  id: PlanId;
  /** Web API requests per sliding hour, per tenant. */
  requestsPerHour: number;
  /** Ingest requests per sliding hour, per project. */
  ingestRequestsPerHour: number;
  /** Events accepted per calendar month (UTC), per tenant. */
  eventsPerMonth: number | null;
  /** Active alert rules per tenant; 0 means the plan has no alerting. */
  maxActiveAlertRules: number;
  /**
   * Days of raw events (and of every row derived from them that holds a player or session id) kept
   * per tenant: the last N UTC calendar days, today included. An owner may shorten it for their
   * studio (tenants.retention_days); never below 1, never above this. docs/architecture.md, "Data retention".
   */
  retentionDays: number;
};

export const PLANS: Record<PlanId, Plan> = {
  free: {
    id: "free",
    retentionDays: 90,
    requestsPerHour: 1_000,
    ingestRequestsPerHour: 3_600,
    eventsPerMonth: 1_000_000,
    maxActiveAlertRules: 0,
  },
  pro: {
    id: "pro",
    retentionDays: 180,
    requestsPerHour: 10_000,
    ingestRequestsPerHour: 36_000,
    eventsPerMonth: 50_000_000,
    maxActiveAlertRules: 10,
  },
  studio: {
    id: "studio",
    retentionDays: 400,
    requestsPerHour: 50_000,
    ingestRequestsPerHour: 180_000,
    eventsPerMonth: 500_000_000,
    maxActiveAlertRules: 50,
  },
  enterprise: {
    id: "enterprise",
    retentionDays: 800,
    requestsPerHour: 250_000,
    ingestRequestsPerHour: 900_000,
    eventsPerMonth: null,
    maxActiveAlertRules: 500,
  },
};

/**
 * The longest retention of any plan: the ClickHouse tables' own TTL (migration 0015), the backstop
 * behind the daily purge (workers/api/data-retention/purge.ts). Raising it needs a new migration.
 */
export const MAX_RETENTION_DAYS = Math.max(...PLAN_IDS.map((id) => PLANS[id].retentionDays));

/** Narrows text from outside the typed schema (a plain-SQL row, a command line) to a plan id. */
export function isPlanId(id: unknown): id is PlanId {
  return PLAN_IDS.some((p) => p === id);
}

export function planOf(id: PlanId): Plan {
  return PLANS[id];
}

/** Key validation has its own bucket, separate from the plan quota. */
export const WHOAMI_REQUESTS_PER_HOUR = 60;
/** Requests without valid credentials, per client IP: slows key guessing. */
export const UNAUTHENTICATED_REQUESTS_PER_HOUR = 300;

/** OAuth token and revocation requests per client IP per hour (a CLI refreshes about once an hour). */
export const OAUTH_REQUESTS_PER_HOUR = 600;
