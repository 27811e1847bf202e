// The wire contract of proto/telemetry/v1/telemetry.proto as data: every field of every message the
// ingest scanner (workers/ingest/wire-scan.ts) and the consumer's row builder
// (workers/ingest/consumer/wire-rows.ts) walk, with its number, wire type, bound (from LIMITS) and
// the ClickHouse column(s) of telemetry.events it lands in. The walkers switch on the numbers in F,
// the INSERT's column list and the query view's columns are built from EVENT_COLUMNS, and
// test/node/telemetry-fields.test.ts holds the table equal to the .proto, both ways.

import { LIMITS } from "./limits.js";

/** Protobuf wire types. */
export const WIRE = Object.freeze({ VARINT: 0, I64: 1, LEN: 2, I32: 5 } as const);
export type WireType = (typeof WIRE)[keyof typeof WIRE];

/** Declared proto types the contract uses, and the wire type each is sent as. */
const WIRE_OF = {
  string: WIRE.LEN,
  int64: WIRE.VARINT,
  uint32: WIRE.VARINT,
  enum: WIRE.VARINT,
  float: WIRE.I32,
  double: WIRE.I64,
  message: WIRE.LEN,
  map: WIRE.LEN,
} as const;
export type ProtoType = keyof typeof WIRE_OF;

/**
 * What ingest accepts. Strings: at most `units` UTF-16 code units (`required`: non-empty). Numbers:
 * finite, min ≤ v ≤ max, or min ≤ v < below. Timestamps: within [now - pastUs, now + aheadUs]. Maps:
 * at most `entries` entries, keys non-empty. Repeated messages: min to max occurrences.
 */
export type Bound =
  | { readonly units: number; readonly required?: true }
  | { readonly min: number; readonly max: number }
  | { readonly min: number; readonly below: number }
  | { readonly pastUs: number; readonly aheadUs: number }
  | { readonly entries: number; readonly keyUnits: number; readonly valueUnits?: number };

export type FieldSpec = {
  readonly no: number;
  readonly name: string;
  readonly type: ProtoType;
  readonly wire: WireType;
  /** For message and map fields: the message (or map entry) it holds, a key of MESSAGES. */
  readonly message?: MessageKey;
  readonly repeated?: true;
  /** proto3 `optional` (explicit presence). */
  readonly optional?: true;
  readonly bound?: Bound;
  /** Performance-bearing: above zero makes the event count as one with performance data (has_perf). */
  readonly perf?: true;
  /** telemetry.events columns filled from this field, in column order; none for a field only walked through. */
  readonly columns: readonly string[];
};

export type MessageSpec = {
  /** The proto's full name (map entries: the name protoc gives them). */
  readonly name: string;
  readonly fields: readonly FieldSpec[];
  readonly reserved?: readonly number[];
};

type MessageKey = "batch" | "event" | "vector3" | "device" | "attributesEntry" | "metricsEntry";

type Extra = Omit<Partial<FieldSpec>, "no" | "name" | "type" | "wire" | "columns">;

function field<const N extends number, const S extends string>(
  no: N,
  name: S,
  type: ProtoType,
  columns: readonly string[],
  extra: Extra = {},
): FieldSpec & { readonly no: N; readonly name: S } {
  return Object.freeze({ no, name, type, wire: WIRE_OF[type], columns, ...extra });
}

// DeviceContext: columns named after its fields. The batch's device context is every event's default;
// an event's own overrides it field by field.
const DEVICE_FIELDS = [
  field(1, "resolution", "string", ["resolution"], { bound: { units: LIMITS.device.resolution } }),
  field(2, "build_config", "string", ["build_config"], { bound: { units: LIMITS.device.build_config } }),
  field(3, "gpu", "string", ["gpu"], { bound: { units: LIMITS.device.gpu } }),
  field(4, "storage", "string", ["storage"], { bound: { units: LIMITS.device.storage } }),
  field(5, "cpu", "string", ["cpu"], { bound: { units: LIMITS.device.cpu } }),
  field(6, "os_version", "string", ["os_version"], { bound: { units: LIMITS.device.os_version } }),
  field(7, "device_model", "string", ["device_model"], { bound: { units: LIMITS.device.device_model } }),
  field(8, "memory_total_mb", "uint32", ["memory_total_mb"]),
  // No column of its own: the consumer writes it as the event's metrics["display.hz"] where the event
  // sends none (the measured rate wins), so every read of the frame budget sees one place.
  field(9, "refresh_rate_hz", "uint32", [], { bound: { min: 0, max: LIMITS.refreshRateHzMax } }),
] as const;

const DEVICE_COLUMNS = DEVICE_FIELDS.flatMap((f) => f.columns);

/** The metrics key a DeviceContext's refresh_rate_hz is stored under (the web SDK's measured rate). */
export const DISPLAY_HZ_METRIC = "display.hz";

type DeviceColumnName = Exclude<(typeof DEVICE_FIELDS)[number]["name"], "refresh_rate_hz">;

/** The device columns of telemetry.events, one per DeviceContext field with a column and named after it. */
export const DEVICE_COLUMN_NAMES = DEVICE_FIELDS.filter((f) => f.columns.length > 0).map(
  (f) => f.name,
) as readonly DeviceColumnName[];

const PERF_FLOAT = { min: 0, max: LIMITS.timeMsMax } as const;
const ATTRIBUTES = LIMITS.attributes;

// GameTelemetryEvent, listed in the order of the columns its fields land in (field number order, but
// for game_thread_ms and render_thread_ms, which sit beside the other timings). Field 7 is reserved.
const EVENT_FIELDS = [
  field(1, "event_name", "string", ["event_name"], {
    bound: { units: LIMITS.event.event_name, required: true },
  }),
  field(2, "timestamp_us", "int64", ["timestamp"], {
    bound: { pastUs: LIMITS.timestampMaxAgeUs, aheadUs: LIMITS.timestampMaxAheadUs },
  }),
  field(3, "session_id", "string", ["session_id"], {
    bound: { units: LIMITS.event.session_id, required: true },
  }),
  field(4, "player_id", "string", ["player_id"], { bound: { units: LIMITS.event.player_id } }),
  field(5, "position", "message", ["position_x", "position_y", "position_z"], { message: "vector3" }),
  field(6, "map_id", "string", ["map_id"], { bound: { units: LIMITS.event.map_id } }),
  field(8, "fps", "float", ["fps"], { bound: { min: 0, max: LIMITS.fpsMax }, perf: true }),
  field(9, "frame_time_ms", "float", ["frame_time_ms"], { bound: PERF_FLOAT, perf: true }),
  field(10, "memory_used_bytes", "int64", ["memory_used_bytes"], {
    bound: { min: 0, max: LIMITS.memoryUsedBytesMax },
    perf: true,
  }),
  field(11, "gpu_time_ms", "float", ["gpu_time_ms"], { bound: PERF_FLOAT, perf: true }),
  field(20, "game_thread_ms", "float", ["game_thread_ms"], { bound: PERF_FLOAT }),
  field(21, "render_thread_ms", "float", ["render_thread_ms"], { bound: PERF_FLOAT }),
  field(12, "attributes", "map", ["attributes"], {
    message: "attributesEntry",
    bound: {
      entries: ATTRIBUTES.maxEntries,
      keyUnits: ATTRIBUTES.keyMaxUnits,
      valueUnits: ATTRIBUTES.valueMaxUnits,
    },
  }),
  field(13, "metrics", "map", ["metrics"], {
    message: "metricsEntry",
    bound: { entries: LIMITS.metrics.maxEntries, keyUnits: LIMITS.metrics.keyMaxUnits },
  }),
  field(14, "source", "enum", ["source"], { bound: { min: 0, max: LIMITS.sourceMax } }),
  field(15, "build_id", "string", ["build_id"], { bound: { units: LIMITS.event.build_id } }),
  field(16, "platform", "string", ["platform"], { bound: { units: LIMITS.event.platform } }),
  field(17, "engine_version", "string", ["engine_version"], {
    bound: { units: LIMITS.event.engine_version },
  }),
  field(18, "camera_yaw", "float", ["camera_yaw"], {
    optional: true,
    bound: { min: 0, below: LIMITS.cameraYawMaxExclusive },
  }),
  field(19, "camera_pitch", "float", ["camera_pitch"], {
    optional: true,
    bound: { min: -LIMITS.cameraPitchAbsMax, max: LIMITS.cameraPitchAbsMax },
  }),
  field(22, "device", "message", DEVICE_COLUMNS, { message: "device" }),
] as const;

const POSITION = { min: -LIMITS.positionAbsMax, max: LIMITS.positionAbsMax } as const;

/** Every message the walkers visit. */
export const MESSAGES = Object.freeze({
  batch: {
    name: "telemetry.v1.TelemetryBatch",
    fields: [
      // Each event is a row; its index in the batch is the row's event_index.
      field(1, "events", "message", [], {
        message: "event",
        repeated: true,
        bound: { min: LIMITS.minEvents, max: LIMITS.maxEvents },
      }),
      // The default of every event's device columns.
      field(2, "device", "message", DEVICE_COLUMNS, { message: "device" }),
    ],
  },
  event: { name: "telemetry.v1.GameTelemetryEvent", fields: EVENT_FIELDS, reserved: [7] },
  // Only ever an event's position: its columns are the position field's.
  vector3: {
    name: "telemetry.v1.Vector3",
    fields: [
      field(1, "x", "float", [], { bound: POSITION }),
      field(2, "y", "float", [], { bound: POSITION }),
      field(3, "z", "float", [], { bound: POSITION }),
    ],
  },
  device: { name: "telemetry.v1.DeviceContext", fields: DEVICE_FIELDS },
  attributesEntry: {
    name: "telemetry.v1.GameTelemetryEvent.AttributesEntry",
    fields: [field(1, "key", "string", []), field(2, "value", "string", [])],
  },
  metricsEntry: {
    name: "telemetry.v1.GameTelemetryEvent.MetricsEntry",
    fields: [field(1, "key", "string", []), field(2, "value", "double", [])],
  },
} as const satisfies Record<MessageKey, MessageSpec>);

type Numbers<T extends readonly FieldSpec[]> = { readonly [E in T[number] as E["name"]]: E["no"] };

function numbers<const T extends readonly FieldSpec[]>(fields: T): Numbers<T> {
  return Object.freeze(Object.fromEntries(fields.map((f) => [f.name, f.no]))) as Numbers<T>;
}

/**
 * Field numbers by message and name, e.g. F.event.fps. Frozen objects of small integers, so an
 * optimised walker's `case F.event.fps:` is a comparison against a constant, as a literal would be.
 */
export const F = Object.freeze({
  batch: numbers(MESSAGES.batch.fields),
  event: numbers(MESSAGES.event.fields),
  vector3: numbers(MESSAGES.vector3.fields),
  device: numbers(MESSAGES.device.fields),
  attributesEntry: numbers(MESSAGES.attributesEntry.fields),
  metricsEntry: numbers(MESSAGES.metricsEntry.fields),
});

/** A field's tag as it is on the wire (a one-byte varint for fields 1-15). */
export function tag(no: number, wire: WireType): number {
  return (no << 3) | wire;
}

/** A message's fields indexed by number (holes for numbers it does not use). */
export function byNumber(fields: readonly FieldSpec[]): (FieldSpec | undefined)[] {
  const out: (FieldSpec | undefined)[] = new Array(Math.max(...fields.map((f) => f.no)) + 1).fill(undefined);
  for (const f of fields) {
    out[f.no] = f;
  }
  return out;
}

/** The telemetry.events columns filled from an event and its batch's device context, in column order. */
export const EVENT_COLUMNS: readonly string[] = Object.freeze(EVENT_FIELDS.flatMap((f) => f.columns));
