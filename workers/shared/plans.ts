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
};

export const PLANS: Record<PlanId, Plan> = {
  free: {
    id: "free",
    requestsPerHour: 1_000,
    ingestRequestsPerHour: 3_600,
    eventsPerMonth: 1_000_000,
    maxActiveAlertRules: 0,
  },
  pro: {
    id: "pro",
    requestsPerHour: 10_000,
    ingestRequestsPerHour: 36_000,
    eventsPerMonth: 50_000_000,
    maxActiveAlertRules: 10,
  },
  studio: {
    id: "studio",
    requestsPerHour: 50_000,
    ingestRequestsPerHour: 180_000,
    eventsPerMonth: 500_000_000,
    maxActiveAlertRules: 50,
  },
  enterprise: {
    id: "enterprise",
    requestsPerHour: 250_000,
    ingestRequestsPerHour: 900_000,
    eventsPerMonth: null,
    maxActiveAlertRules: 500,
  },
};

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
