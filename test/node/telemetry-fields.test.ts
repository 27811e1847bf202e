import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { EVENTS_COLUMNS } from "../../workers/api/query/events-view.js";
import { INSERT_COLUMNS } from "../../workers/ingest/consumer/wire-rows.js";
import { EVENT_COLUMNS, F, type FieldSpec, MESSAGES } from "../../workers/shared/telemetry/fields.js";

// The field table (workers/shared/telemetry/fields.ts) against the .proto it transcribes, parsed with
// protobufjs, and the column lists built from it against the ClickHouse table they insert into.
const ROOT = join(import.meta.dirname, "..", "..");
const proto = protobuf.parse(readFileSync(join(ROOT, "proto/telemetry/v1/telemetry.proto"), "utf8"), {
  keepCase: true,
}).root;
proto.resolveAll();

const WIRE_OF_SCALAR: Record<string, number> = {
  string: 2,
  bytes: 2,
  int64: 0,
  uint64: 0,
  int32: 0,
  uint32: 0,
  sint32: 0,
  sint64: 0,
  bool: 0,
  float: 5,
  fixed32: 5,
  sfixed32: 5,
  double: 1,
  fixed64: 1,
  sfixed64: 1,
};

type Described = {
  no: number;
  name: string;
  type: string;
  wire: number;
  repeated: boolean;
  optional: boolean;
};

/** A protobufjs field in the table's terms. */
function fromProto(f: protobuf.Field): Described {
  const isMap = f instanceof protobuf.MapField;
  const type = isMap
    ? "map"
    : f.resolvedType instanceof protobuf.Type
      ? "message"
      : f.resolvedType instanceof protobuf.Enum
        ? "enum"
        : f.type;
  const wire =
    type === "map" || type === "message" ? 2 : type === "enum" ? 0 : (WIRE_OF_SCALAR[f.type] ?? -1);
  return {
    no: f.id,
    name: f.name,
    type,
    wire,
    repeated: f.repeated,
    optional: f.options?.proto3_optional === true,
  };
}

function fromTable(f: FieldSpec): Described {
  return {
    no: f.no,
    name: f.name,
    type: f.type,
    wire: f.wire,
    repeated: f.repeated === true,
    optional: f.optional === true,
  };
}

const byNo = (a: Described, b: Described) => a.no - b.no;

const STORED = (definition: string) => !/\b(ALIAS|MATERIALIZED)\b/.test(definition);

/**
 * The column names of the newest CREATE TABLE telemetry.events, with their kind (ALIAS, MATERIALIZED or
 * stored), then those the later migrations add to it (ALTER TABLE … ADD COLUMN), in migration order.
 */
function eventsTableColumns(): { name: string; stored: boolean }[] {
  const dir = join(ROOT, "schema/clickhouse/migrations");
  const sql = readFileSync(join(dir, "0003_sdk_wire_layout.sql"), "utf8");
  const body = sql.slice(sql.indexOf("CREATE TABLE IF NOT EXISTS telemetry.events"), sql.indexOf("ENGINE ="));
  const created = [...body.matchAll(/^ {4}(\w+) ([^\n]*)$/gm)]
    .filter((m) => m[1] !== "INDEX")
    .map((m) => ({ name: m[1] as string, stored: STORED(m[2] as string) }));
  const added = readdirSync(dir)
    .filter((f) => f > "0003_sdk_wire_layout.sql" && f.endsWith(".sql"))
    .sort()
    .flatMap((f) => [
      ...readFileSync(join(dir, f), "utf8").matchAll(
        /^ALTER TABLE telemetry\.events ADD COLUMN IF NOT EXISTS (\w+) ([^;]*);$/gm,
      ),
    ])
    .map((m) => ({ name: m[1] as string, stored: STORED(m[2] as string) }));
  return [...created, ...added];
}

describe("the telemetry field table", () => {
  const messages = Object.entries(MESSAGES).filter(([, m]) => !m.name.endsWith("Entry"));

  it.each(messages)(
    "%s: every field of the .proto and nothing else, same number, name, type and wire type",
    (_, m) => {
      const type = proto.lookupType(m.name);
      const inProto = type.fieldsArray.map(fromProto).sort(byNo);
      const inTable = m.fields.map(fromTable).sort(byNo);
      expect(inTable).toEqual(inProto);
      expect(inTable.length).toBeGreaterThan(0);
    },
  );

  it.each(messages)("%s: reserved numbers as in the .proto", (_, m) => {
    const reserved = (proto.lookupType(m.name).reserved ?? [])
      .filter((r) => Array.isArray(r))
      .flatMap(([lo, hi]) =>
        Array.from({ length: (hi as number) - (lo as number) + 1 }, (_, i) => (lo as number) + i),
      );
    expect("reserved" in m ? m.reserved : []).toEqual(reserved);
  });

  it("names the message each message and map field holds, as the .proto does", () => {
    for (const [, m] of messages) {
      const type = proto.lookupType(m.name);
      for (const f of m.fields) {
        const pf = type.fields[f.name] as protobuf.Field;
        if (f.type === "message") {
          expect(MESSAGES[f.message as keyof typeof MESSAGES].name, `${m.name}.${f.name}`).toBe(
            pf.resolvedType?.fullName.slice(1),
          );
        } else if (f.type === "map") {
          // A map field is a repeated entry message: key 1, value 2.
          const entry = MESSAGES[f.message as keyof typeof MESSAGES];
          expect(pf).toBeInstanceOf(protobuf.MapField);
          expect(entry.name).toBe(`${m.name}.${f.name[0]?.toUpperCase()}${f.name.slice(1)}Entry`);
          expect(entry.fields.map(fromTable)).toEqual([
            {
              no: 1,
              name: "key",
              type: (pf as unknown as protobuf.MapField).keyType,
              wire: 2,
              repeated: false,
              optional: false,
            },
            {
              no: 2,
              name: "value",
              type: pf.type,
              wire: WIRE_OF_SCALAR[pf.type],
              repeated: false,
              optional: false,
            },
          ]);
        } else {
          expect(f.message, `${m.name}.${f.name}`).toBeUndefined();
        }
      }
    }
  });

  it("derives F: field numbers by message and name", () => {
    expect(F.event.fps).toBe(8);
    expect(F.event.device).toBe(22);
    expect(F.batch.events).toBe(1);
    expect(F.device.memory_total_mb).toBe(8);
    for (const [key, m] of Object.entries(MESSAGES)) {
      expect(F[key as keyof typeof F]).toEqual(Object.fromEntries(m.fields.map((f) => [f.name, f.no])));
    }
    expect(Object.isFrozen(F.event)).toBe(true);
  });
});

describe("column lists built from the table", () => {
  it("the INSERT fills every stored column of telemetry.events once, and nothing else", () => {
    const stored = eventsTableColumns()
      .filter((c) => c.stored)
      .map((c) => c.name);
    expect(stored).toContain("memory_total_mb");
    expect([...INSERT_COLUMNS].sort()).toEqual([...stored].sort());
    expect(new Set(INSERT_COLUMNS).size).toBe(INSERT_COLUMNS.length);
  });

  it("the wire's columns come in the table's order", () => {
    expect(INSERT_COLUMNS.slice(1, 1 + EVENT_COLUMNS.length)).toEqual([...EVENT_COLUMNS]);
    expect(INSERT_COLUMNS[0]).toBe("event_index");
    expect(INSERT_COLUMNS.slice(1 + EVENT_COLUMNS.length)).toEqual([
      "project_id",
      "sdk_name",
      "sdk_version",
      "batch_id",
      "received_at",
      "player_idx",
      "session_idx",
    ]);
  });

  it("the query view keeps its columns and their order: the wire's plus project_id, memory_mb and the SDK's", () => {
    // Existing clients see these columns in this order (query results, exports).
    expect(EVENTS_COLUMNS).toEqual([
      "project_id",
      "event_name",
      "timestamp",
      "session_id",
      "player_id",
      "position_x",
      "position_y",
      "position_z",
      "map_id",
      "fps",
      "frame_time_ms",
      "memory_used_bytes",
      "memory_mb",
      "gpu_time_ms",
      "game_thread_ms",
      "render_thread_ms",
      "attributes",
      "metrics",
      "source",
      "build_id",
      "platform",
      "engine_version",
      "camera_yaw",
      "camera_pitch",
      "resolution",
      "build_config",
      "gpu",
      "storage",
      "cpu",
      "os_version",
      "device_model",
      "memory_total_mb",
      "sdk_name",
      "sdk_version",
    ]);
    // The view's deliberate differences from the wire's columns: no bookkeeping of the batch.
    const table = eventsTableColumns().map((c) => c.name);
    const left = table.filter((c) => !EVENTS_COLUMNS.includes(c));
    expect(left).toEqual([
      "batch_id",
      "event_index",
      "received_at",
      "player",
      "has_perf",
      "player_idx",
      "session_idx",
    ]);
  });
});
