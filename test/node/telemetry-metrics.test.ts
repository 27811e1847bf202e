import { readFileSync } from "node:fs";
import { join } from "node:path";
import { getTableColumns } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { alertEvaluationEvents, alertRules, thresholdProfiles } from "../../schema/pg/schema.js";
import { COMPARE_METRICS } from "../../workers/api/analytics/compare.js";
import { BOUNDS, SLOW_BASES } from "../../workers/api/analytics/frame-causes.js";
import { REGRESSION_QUERY_METRICS } from "../../workers/api/analytics/regressions.js";
import * as alertSchemas from "../../workers/api/routes/alerts/schema.js";
import * as analyticsSchemas from "../../workers/api/routes/analytics/schema.js";
import * as profileSchemas from "../../workers/api/routes/threshold-profiles/schema.js";
import { MESSAGES } from "../../workers/shared/telemetry/fields.js";
import {
  ALERT_METRIC,
  ALERT_METRIC_KEYS,
  METRIC_KEYS,
  METRICS,
} from "../../workers/shared/telemetry/metrics.js";

// The metric table (workers/shared/telemetry/metrics.ts) against everything else that names the metrics:
// the wire's performance-bearing fields, the ClickHouse columns its names point at (read from the
// migrations), the Postgres columns and enum lists (the drizzle schema), the API's zod enums and the
// OpenAPI document the dashboard's types are generated from. The dashboard's key type is held to the
// table at compile time (workers/api/web/client/metrics.ts).
const ROOT = join(import.meta.dirname, "..", "..");
const KEYS = [...METRIC_KEYS];
/** What an alert rule judges: the table's keys, in its order, then the frame-budget share. */
const ALERT_KEYS = [...KEYS, "budget_share"];
/**
 * Whether an enum lists metrics of this family. The build comparison's metrics (COMPARE_METRICS: frame
 * time, memory, GPU time and metrics-map keys, no fps) are another family, with its own list; what the
 * cell's `why` judges slow heartbeats by (SLOW_BASES: a profile's frame-time or fps mark, or every
 * heartbeat) and what bounds a frame (BOUNDS, memory pressure among them) name metrics and are no
 * metric lists. What builds/regressions judges (REGRESSION_QUERY_METRICS) is the table's keys, in its
 * order, and then the share of poor sessions: the test holds that prefix below.
 */
const isMetricEnum = (values: unknown[]) =>
  values.some((x) => (KEYS as unknown[]).includes(x)) &&
  ![COMPARE_METRICS, SLOW_BASES, BOUNDS, REGRESSION_QUERY_METRICS].some(
    (other) => JSON.stringify(values) === JSON.stringify(other),
  );

it("builds/regressions judges the table's metrics, in its order, then the poor sessions' share", () => {
  expect(REGRESSION_QUERY_METRICS).toEqual([...KEYS, "poor_session_share"]);
});

it("alert rules judge the table's metrics, in its order, then the budget share by the profile's shares", () => {
  expect([...ALERT_METRIC_KEYS]).toEqual(ALERT_KEYS);
  for (const m of METRICS) {
    expect(ALERT_METRIC[m.key]).toBe(m);
  }
  expect(ALERT_METRIC.budget_share.profile).toEqual({ good: "budgetShareGood", warn: "budgetShareWarn" });
  expect(ALERT_METRIC.budget_share.better).toBe("higher");
});
const migration = (file: string) => readFileSync(join(ROOT, "schema/clickhouse/migrations", file), "utf8");

/** The columns of a CREATE TABLE in a migration: name → the rest of its line. */
function tableColumns(file: string, table: string): Map<string, string> {
  const sql = migration(file);
  const start = sql.indexOf(`CREATE TABLE IF NOT EXISTS ${table}\n`);
  expect(start, `${table} in ${file}`).toBeGreaterThanOrEqual(0);
  const body = sql.slice(start, sql.indexOf("ENGINE =", start));
  return new Map(
    [...body.matchAll(/^ {4}(\w+) ([^\n]*?),?$/gm)]
      .filter((m) => m[1] !== "INDEX")
      .map((m) => [m[1] as string, m[2] as string]),
  );
}

/** Every enum (its values) of a zod schema tree that holds a metric key. */
function zodMetricEnums(root: unknown): string[][] {
  const out: string[][] = [];
  const seen = new Set<unknown>();
  const visit = (v: unknown) => {
    if (v === null || typeof v !== "object" || seen.has(v)) {
      return;
    }
    seen.add(v);
    if (Array.isArray(v)) {
      v.forEach(visit);
      return;
    }
    const def = (v as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
    if (def) {
      if (def.type === "enum") {
        const values = Object.values(def.entries as Record<string, string>);
        if (isMetricEnum(values)) {
          out.push(values);
        }
      }
      visit(def);
      return;
    }
    Object.values(v).forEach(visit);
  };
  visit(root);
  return out;
}

describe("the metric table", () => {
  it("has unique keys, columns, rollups and profile fields", () => {
    for (const of of [
      (m: (typeof METRICS)[number]) => m.key,
      (m: (typeof METRICS)[number]) => m.column,
      (m: (typeof METRICS)[number]) => m.rollup,
      (m: (typeof METRICS)[number]) => m.profile.good,
      (m: (typeof METRICS)[number]) => m.profile.warn,
    ]) {
      expect(new Set(METRICS.map(of)).size).toBe(METRICS.length);
    }
    expect(KEYS).toEqual(METRICS.map((m) => m.key));
    expect(Object.isFrozen(METRICS)).toBe(true);
  });

  it("has a metric for each performance-bearing wire field, and no other", () => {
    const perf = MESSAGES.event.fields.filter((f) => "perf" in f && f.perf).map((f) => f.name);
    expect(METRICS.map((m) => m.field).sort()).toEqual([...perf].sort());
  });

  it("histogram edges: 4 per octave, 1 to 1,024 (times, fps) and 16 MB to 64 GiB (memory)", () => {
    for (const m of METRICS) {
      const [first, last] = m.unit === "MB" ? [16, 65536] : [1, 1024];
      expect(m.edges[0]).toBe(first);
      expect(m.edges.at(-1)).toBe(last);
      expect(m.edges.length).toBe(4 * Math.log2(last / first) + 1);
      m.edges.forEach((e, i) => {
        expect(e).toBeCloseTo(first * 2 ** (i / 4), 9);
      });
    }
  });
});

describe("the ClickHouse columns the table names", () => {
  const events = tableColumns("0003_sdk_wire_layout.sql", "telemetry.events");
  const samples = tableColumns("0005_cell_samples.sql", "telemetry.cell_samples");

  it.each(METRICS)(
    "$key: its sample column is the wire field's, in telemetry.events and cell_samples",
    (m) => {
      expect(events.has(m.field), `events.${m.field}`).toBe(true);
      expect(events.has(m.column), `events.${m.column}`).toBe(true);
      expect(samples.has(m.column), `cell_samples.${m.column}`).toBe(true);
      if (m.column !== m.field) {
        // Megabytes from the wire's bytes.
        expect(m.unit).toBe("MB");
        expect(events.get(m.column)).toMatch(new RegExp(`ALIAS ${m.field} / 1048576$`));
        expect(samples.get(m.column)).toMatch(new RegExp(`ALIAS ${m.field} / 1048576$`));
      }
    },
  );

  it.each(METRICS)("$key: the rollups keep <rollup>_sum and <rollup>_n of it", (m) => {
    for (const table of ["telemetry.heatmap_cells", "telemetry.alert_cells"]) {
      const cols = tableColumns("0004_rollups.sql", table);
      expect(cols.has(`${m.rollup}_sum`), `${table}.${m.rollup}_sum`).toBe(true);
      expect(cols.has(`${m.rollup}_n`), `${table}.${m.rollup}_n`).toBe(true);
    }
    // alert_cells is filled from the events' wire field (its source view spells the field).
    const src = migration("0004_rollups.sql");
    const view = src.slice(src.indexOf("CREATE VIEW IF NOT EXISTS telemetry.alert_cells_src"));
    const line = view.split("\n").find((l) => l.includes(`AS ${m.rollup}_sum`)) ?? "";
    expect(line).toContain(m.field);
    expect(line).toContain(`toUInt64(count(${m.field})) AS ${m.rollup}_n`);
  });
});

describe("the Postgres schema", () => {
  it("types the metric columns with the table's keys", () => {
    expect(alertRules.metric.enumValues).toEqual(ALERT_KEYS);
    expect(alertEvaluationEvents.metric.enumValues).toEqual(ALERT_KEYS);
  });

  it("has a double precision column for each profile field the table names, and no other threshold", () => {
    const columns = getTableColumns(thresholdProfiles);
    const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
    const named = METRICS.flatMap((m) => [m.profile.good, m.profile.warn]);
    for (const f of named) {
      const c = columns[f as keyof typeof columns];
      expect(c?.name, f).toBe(snake(f));
      expect(c?.getSQLType(), f).toBe("double precision");
    }
    // The one pair outside the table: the share of heartbeats within their display's budget, which the
    // heatmap's budget mode judges (not a per-sample metric).
    expect(columns.budgetShareGood.getSQLType()).toBe("double precision");
    expect(columns.budgetShareWarn.getSQLType()).toBe("double precision");
    const thresholds = Object.keys(columns).filter((k) => /(Good|Warn)$/.test(k));
    expect(thresholds.sort()).toEqual([...named, "budgetShareGood", "budgetShareWarn"].sort());
  });
});

describe("the API", () => {
  it("every zod enum of a metric is the table's keys, in its order (an alert's, then the budget share)", () => {
    // The rule's input (create and update share it), the rule, the evaluation event.
    const alerts = zodMetricEnums(Object.values(alertSchemas));
    expect(alerts.length).toBeGreaterThanOrEqual(3);
    for (const values of alerts) {
      expect(values).toEqual(ALERT_KEYS);
    }
    // The drill-down's query, answer, marks and repro.
    const analytics = zodMetricEnums(Object.values(analyticsSchemas));
    expect(analytics.length).toBeGreaterThanOrEqual(4);
    for (const values of analytics) {
      expect(values).toEqual(KEYS);
    }
  });

  it("the drill-down's distributions and the profile's fields are the table's", () => {
    const dists = analyticsSchemas.CellDrilldownSchema.shape.distributions.shape;
    expect(Object.keys(dists)).toEqual(KEYS);
    const profile = Object.keys(profileSchemas.ThresholdProfileSchema.shape).filter((k) =>
      /(Good|Warn)$/.test(k),
    );
    expect(profile).toEqual([
      ...METRICS.flatMap((m) => [m.profile.good, m.profile.warn]),
      "budgetShareGood",
      "budgetShareWarn",
    ]);
  });

  const doc = JSON.parse(readFileSync(join(ROOT, "workers/api/web/client/openapi.gen.json"), "utf8"));

  it("every metric enum of the OpenAPI document is the table's keys", () => {
    const found: unknown[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) {
        v.forEach(walk);
      } else if (v && typeof v === "object") {
        const e = (v as { enum?: unknown[] }).enum;
        if (Array.isArray(e) && isMetricEnum(e)) {
          found.push(e);
        }
        Object.values(v).forEach(walk);
      }
    };
    walk(doc);
    expect(found.length).toBeGreaterThanOrEqual(8);
    for (const e of found) {
      expect([KEYS, ALERT_KEYS]).toContainEqual(e);
    }
    expect(
      found.filter((e) => JSON.stringify(e) === JSON.stringify(ALERT_KEYS)).length,
    ).toBeGreaterThanOrEqual(3);
  });

  it("documents the fields the table names: heatmap mean and tail, distribution tail, profile thresholds", () => {
    const schemas = doc.components.schemas;
    const cell = Object.keys(schemas.HeatmapCell.properties);
    const distribution = Object.keys(schemas.CellDistribution.properties);
    const profile = Object.keys(schemas.ThresholdProfile.properties);
    for (const m of METRICS) {
      expect(cell).toContain(m.heatmap.mean);
      expect(cell).toContain(m.heatmap.tail);
      expect(m.heatmap.tail.startsWith(`${m.tail}_`)).toBe(true);
      expect(distribution).toContain(m.tail);
      expect(profile).toContain(m.profile.good);
      expect(profile).toContain(m.profile.warn);
    }
    expect(Object.keys(schemas.HeatmapCellDrilldown.properties.distributions.properties)).toEqual(KEYS);
  });
});
