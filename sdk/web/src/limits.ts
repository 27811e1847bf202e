// The ingest edge's bounds (the wire contract's), as the SDK clamps to them. A copy, because the package
// is published on its own; the repository's tests hold it equal to the service's LIMITS.

export const LIMITS = {
  /** Strings of GameTelemetryEvent, in UTF-16 code units. */
  event: {
    event_name: 128,
    session_id: 128,
    player_id: 128,
    map_id: 128,
    build_id: 128,
    platform: 64,
    engine_version: 64,
  },
  /** Strings of DeviceContext, in UTF-16 code units. */
  device: {
    resolution: 32,
    build_config: 64,
    gpu: 256,
    storage: 64,
    cpu: 256,
    os_version: 128,
    device_model: 128,
  },
  maxEvents: 10_000,
  maxDecodedEntries: 100_000,
  /** The request body as sent, in bytes. */
  maxCompressedBytes: 126_000,
  positionAbsMax: 1e9,
  fpsMax: 1_000,
  timeMsMax: 10_000,
  memoryUsedBytesMax: 64 * 1024 * 1024 * 1024,
  cameraYawMaxExclusive: 360,
  cameraPitchAbsMax: 90,
  attributes: { maxEntries: 50, keyMaxUnits: 64, valueMaxUnits: 512 },
  metrics: { maxEntries: 50, keyMaxUnits: 64 },
} as const;
