// Vars and secrets are checked once per isolate at the entry: a misconfigured deploy fails loudly on its
// first request instead of half-working. A plain reader (no schema library), because the ingest
// Worker's bundle must stay free of one.

export type Config = {
  DATABASE_URL: string;
  CLICKHOUSE_URL: string;
  CLICKHOUSE_USER: string;
  CLICKHOUSE_PASSWORD: string;
  /**
   * The user POST /v1/query runs as: SELECT on telemetry.events only, readonly. Empty: the main user,
   * with readonly enforced per query (the local engine has no users).
   */
  CLICKHOUSE_QUERY_USER: string;
  CLICKHOUSE_QUERY_PASSWORD: string;
  /** Where browsers land for any path outside /api (API Worker only; empty on the ingest Worker). */
  SIGN_IN_URL: string;
  /**
   * The app's public origin (e.g. https://app.example.com), API Worker only: alert notifications and
   * the evaluation history link to its dashboard pages with it. Empty: those links are root-relative.
   */
  APP_URL: string;
  /** Local stack only: host:port of the WebSocket-to-TCP proxy standing in for Neon's. */
  NEON_LOCAL_PROXY: string;
  /** How long an isolate trusts a resolved credential without reading Postgres (ms); empty: 15 s. */
  CREDENTIAL_CACHE_TTL_MS: string;
  /**
   * API Worker only, a secret: what the admin CLI presents to announce changes it made to credentials
   * (credentials/operator.ts). Empty: the operator route refuses every request.
   */
  OPERATOR_SECRET: string;
  /**
   * API Worker only, a secret: 32 random bytes in base64, the AES-GCM key that encrypts each studio's
   * single sign-on client secret at rest (workers/api/sso/secret.ts). Empty: SSO cannot be configured.
   */
  SSO_SECRET_KEY: string;
  /**
   * API Worker only: the DNS-over-HTTPS resolver's JSON endpoint that checks the TXT records proving a
   * studio owns its single sign-on domains (workers/api/sso/dns.ts), e.g. Cloudflare's
   * https://cloudflare-dns.com/dns-query (wrangler.toml). Empty: domains cannot be verified (503).
   */
  SSO_DNS_RESOLVER: string;
};

type Rule = { required: boolean; check?: (v: string) => boolean; rule?: string };

const RULES: Record<keyof Config, Rule> = {
  DATABASE_URL: {
    required: true,
    check: (v) => /^postgres(ql)?:\/\//.test(v),
    rule: "must be a postgres:// URL",
  },
  CLICKHOUSE_URL: { required: true, check: isHttpUrl, rule: "must be an http(s) URL" },
  CLICKHOUSE_USER: { required: true, check: (v) => v.length > 0, rule: "must not be empty" },
  CLICKHOUSE_PASSWORD: { required: false },
  CLICKHOUSE_QUERY_USER: { required: false },
  CLICKHOUSE_QUERY_PASSWORD: { required: false },
  SIGN_IN_URL: { required: false },
  APP_URL: {
    required: false,
    check: (v) => v === "" || (isHttpUrl(v) && new URL(v).pathname === "/" && !v.includes("?")),
    rule: "must be an http(s) origin (no path or query), or empty",
  },
  NEON_LOCAL_PROXY: {
    required: false,
    check: (v) => /^(|[\w.-]+:\d+)$/.test(v),
    rule: "must be host:port or empty",
  },
  CREDENTIAL_CACHE_TTL_MS: {
    required: false,
    check: (v) => /^(|\d{1,6})$/.test(v),
    rule: "must be a whole number of milliseconds below 1,000,000, or empty",
  },
  OPERATOR_SECRET: {
    required: false,
    check: (v) => v === "" || v.length >= 32,
    rule: "must be at least 32 characters, or empty",
  },
  SSO_SECRET_KEY: {
    required: false,
    check: (v) => v === "" || /^[A-Za-z0-9+/]{43}=$/.test(v),
    rule: "must be 32 bytes in base64 (44 characters), or empty",
  },
  SSO_DNS_RESOLVER: {
    required: false,
    check: (v) => v === "" || isResolverUrl(v),
    rule: "must be an https URL (http only on a loopback host), or empty",
  },
};

/** https, or http on a loopback host (tests and local development). */
function isResolverUrl(v: string): boolean {
  if (!isHttpUrl(v)) {
    return false;
  }
  const u = new URL(v);
  return (
    u.protocol === "https:" ||
    u.hostname === "localhost" ||
    u.hostname === "[::1]" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(u.hostname)
  );
}

function isHttpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/** Reads the Config out of a Worker's env: any string-valued bindings of those names. */
export function readConfig(env: object): Config {
  const issues: string[] = [];
  const out: Partial<Config> = {};
  for (const [name, rule] of Object.entries(RULES) as [keyof Config, Rule][]) {
    const raw: unknown = Reflect.get(env, name);
    if (raw !== undefined && typeof raw !== "string") {
      issues.push(`${name}: must be a string`);
      continue;
    }
    if (raw === undefined && rule.required) {
      issues.push(`${name}: is required`);
      continue;
    }
    const value = raw ?? "";
    if (rule.check && !rule.check(value)) {
      issues.push(`${name}: ${rule.rule}`);
      continue;
    }
    out[name] = value;
  }
  if (issues.length) {
    throw new Error(`invalid Worker configuration: ${issues.join("; ")}`);
  }
  return out as Config;
}

const cache = new WeakMap<object, Config>();

/** The Config of this env, read once per env object (one per isolate in production). */
export function configOf(env: object): Config {
  let config = cache.get(env);
  if (!config) {
    config = readConfig(env);
    cache.set(env, config);
  }
  return config;
}

// ---- Local-only knobs ---------------------------------------------------------------------------
// Test clocks, injected faults and small export segments: what only the local stack (LOCAL_KNOBS in the
// environment of scripts/local/wrangler.ts) and the tests (vitest.config.ts) set, all behind one
// binding, LOCAL_KNOBS, a JSON object read once per env. No wrangler config declares it
// (test/node/worker-configs.test.ts), so a deployed Worker runs with every knob off.

export type LocalKnobs = {
  /** X-Test-Now sets a request's now (workers/api/clock.ts). */
  testClock: boolean;
  /**
   * The jobs consumer throws after recording `pairs` pairs of an alert-pairs message, on its first
   * delivery (retries then finish it); only for runs at or after `fromRunAt` when given
   * (workers/api/alerts/consume.ts). Written "N" or "N:<ms>".
   */
  alertFaultThrowAfter: { pairs: number; fromRunAt: number | null } | null;
  /** An erasure delivery throws once this many steps are recorded, on its first attempt (erasure/run.ts). */
  erasureFaultAfterSteps: number | null;
  /** Export segments of this many rows instead of SEGMENT_ROWS (exports/consumer.ts). */
  exportSegmentRows: number | null;
  /** The segments one export message writes before it sends the next. */
  exportSegmentsPerMessage: number | null;
  /** The first attempt of a delivery throws once segment k's parts and carry are stored, before its state. */
  exportFaultAtSegment: number | null;
  /** Lowers PARQUET_MAX_ROWS. */
  exportParquetMaxRows: number | null;
  /** The export query's max_block_size, so a small export streams in many blocks (exports/segments.ts). */
  exportBlockRows: number | null;
};

export const NO_LOCAL_KNOBS: LocalKnobs = {
  testClock: false,
  alertFaultThrowAfter: null,
  erasureFaultAfterSteps: null,
  exportSegmentRows: null,
  exportSegmentsPerMessage: null,
  exportFaultAtSegment: null,
  exportParquetMaxRows: null,
  exportBlockRows: null,
};

/** A whole number from 0 to 999,999,999, given as a number or digits. */
function wholeKnob(name: string, v: unknown): number | null {
  if (v === undefined || v === null) {
    return null;
  }
  const s = typeof v === "number" ? String(v) : v;
  if (typeof s !== "string" || !/^\d{1,9}$/.test(s)) {
    throw new Error(`invalid LOCAL_KNOBS: ${name} must be a whole number`);
  }
  return Number(s);
}

/** Reads LOCAL_KNOBS (absent or empty: every knob off); an unknown knob or a bad value throws. */
export function readLocalKnobs(env: object): LocalKnobs {
  const raw: unknown = Reflect.get(env, "LOCAL_KNOBS");
  if (raw === undefined || raw === "") {
    return NO_LOCAL_KNOBS;
  }
  let parsed: unknown;
  try {
    parsed = typeof raw === "string" ? JSON.parse(raw) : raw;
  } catch {
    throw new Error("invalid LOCAL_KNOBS: must be a JSON object");
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error("invalid LOCAL_KNOBS: must be a JSON object");
  }
  const given = new Map(Object.entries(parsed));
  const unknown = [...given.keys()].filter((k) => !Object.hasOwn(NO_LOCAL_KNOBS, k));
  if (unknown.length) {
    throw new Error(`invalid LOCAL_KNOBS: unknown knob ${unknown.join(", ")}`);
  }
  const clock = given.get("testClock") ?? false;
  if (typeof clock !== "boolean") {
    throw new Error("invalid LOCAL_KNOBS: testClock must be true or false");
  }
  let alertFault: LocalKnobs["alertFaultThrowAfter"] = null;
  const fault = given.get("alertFaultThrowAfter");
  if (fault !== undefined && fault !== null) {
    const m = /^(\d{1,6})(?::(\d{1,15}))?$/.exec(String(fault));
    if (!m) {
      throw new Error("invalid LOCAL_KNOBS: alertFaultThrowAfter must be N or N:<ms>");
    }
    alertFault = { pairs: Number(m[1]), fromRunAt: m[2] === undefined ? null : Number(m[2]) };
  }
  return {
    testClock: clock,
    alertFaultThrowAfter: alertFault,
    erasureFaultAfterSteps: wholeKnob("erasureFaultAfterSteps", given.get("erasureFaultAfterSteps")),
    exportSegmentRows: wholeKnob("exportSegmentRows", given.get("exportSegmentRows")),
    exportSegmentsPerMessage: wholeKnob("exportSegmentsPerMessage", given.get("exportSegmentsPerMessage")),
    exportFaultAtSegment: wholeKnob("exportFaultAtSegment", given.get("exportFaultAtSegment")),
    exportParquetMaxRows: wholeKnob("exportParquetMaxRows", given.get("exportParquetMaxRows")),
    exportBlockRows: wholeKnob("exportBlockRows", given.get("exportBlockRows")),
  };
}

const knobCache = new WeakMap<object, LocalKnobs>();

/** The local-only knobs of this env, read once per env object (every knob off in a deployed Worker). */
export function localKnobsOf(env: object): LocalKnobs {
  let knobs = knobCache.get(env);
  if (!knobs) {
    knobs = readLocalKnobs(env);
    knobCache.set(env, knobs);
  }
  return knobs;
}
