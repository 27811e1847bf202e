// Every bound the ingest edge enforces on a TelemetryBatch: the scanner checks them, the consumer
// sizes its buffers by them, and the API documents them. Shared by both Workers.

export const MiB = 1024 * 1024;
export const GiB = 1024 * MiB;
export const SECOND_US = 1_000_000;
export const HOUR_US = 3_600 * SECOND_US;
export const DAY_US = 24 * HOUR_US;

/**
 * Every bound enforced at ingest, in one place. None is tighter than the SDKs'
 * client-side clamps (FieldClamp / BatchPolicy), so an SDK batch never fails
 * on a bound the SDK already enforced. String bounds count UTF-16 code units.
 */
export const LIMITS = {
  /** Request body as sent (gzip'd), in bytes. Enforced by the HTTP handler, not by the scanner. */
  maxCompressedBytes: 126_000,
  /** Decompressed batch, in bytes. The handler should stop inflating past this; the scanner also checks it. */
  maxDecompressedBytes: 8 * MiB,
  /** Events per batch (inclusive). */
  minEvents: 1,
  maxEvents: 10_000,
  /** Decoded entries per batch: events plus every attributes and metrics entry, duplicates counted as on the wire. */
  maxDecodedEntries: 100_000,
  /** Protobuf varints are at most 10 bytes (64 bits); tags at most 5 bytes (32 bits). */
  maxVarintBytes: 10,
  maxTagBytes: 5,

  /** GameTelemetryEvent string fields, in UTF-16 code units. event_name and session_id are required (non-empty). */
  event: {
    event_name: 128,
    session_id: 128,
    player_id: 128,
    map_id: 128,
    build_id: 128,
    platform: 64,
    engine_version: 64,
  },

  /** DeviceContext string fields (batch field 2, event field 22), in UTF-16 code units. memory_total_mb: any uint32. */
  device: {
    resolution: 32,
    build_config: 64,
    gpu: 256,
    storage: 64,
    cpu: 256,
    os_version: 128,
    device_model: 128,
  },

  /** timestamp_us must satisfy nowUs - maxAgeUs ≤ ts ≤ nowUs + maxAheadUs (a missing timestamp is 0). */
  timestampMaxAgeUs: 30 * DAY_US,
  timestampMaxAheadUs: 48 * HOUR_US,

  /** position: each coordinate finite with |v| ≤ this (position itself may be absent). */
  positionAbsMax: 1e9,
  /** fps: finite, 0 ≤ fps ≤ this (0 means not collected). */
  fpsMax: 1_000,
  /** frame_time_ms, gpu_time_ms, game_thread_ms, render_thread_ms: finite, 0 ≤ v ≤ this (0 means not collected). */
  timeMsMax: 10_000,
  /** DeviceContext refresh_rate_hz: 0 ≤ v ≤ this (0 means not collected). */
  refreshRateHzMax: 1_000,
  /** memory_used_bytes: 0 ≤ v ≤ this (64 GiB). */
  memoryUsedBytesMax: 64 * GiB,
  /** camera_yaw in [0, this) degrees and camera_pitch in [-this, this]; both present or both absent, finite. */
  cameraYawMaxExclusive: 360,
  cameraPitchAbsMax: 90,
  /** source: TelemetrySource values 0 (unspecified), 1 (player), 2 (automated); anything else is refused. */
  sourceMax: 2,

  /** attributes: map<string, string>. Entries counted as on the wire; keys non-empty. Lengths in UTF-16 code units. */
  attributes: { maxEntries: 50, keyMaxUnits: 64, valueMaxUnits: 512 },
  /** metrics: map<string, double>; keys non-empty, every value finite. */
  metrics: { maxEntries: 50, keyMaxUnits: 64 },
} as const;
