// What the typed text and jsonb columns of schema/pg/schema.ts hold, one list each: the schema types
// its columns with these lists and the request validators (z.enum) take the same ones, so a value
// read back has the type of the values written. The columns stay plain text in SQL (drizzle's `enum`
// on text is TypeScript only), so adding a value is a code change and needs no migration. The metric columns take the metric
// table's keys (telemetry/metrics.ts).

export const THRESHOLD_LEVELS = ["warn", "good"] as const;
export type ThresholdLevel = (typeof THRESHOLD_LEVELS)[number];

/** A (rule, profile) pair's status, as recorded in alert_evaluation_events. */
export const ALERT_STATUSES = ["triggered", "resolved"] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];
/** A (rule, profile)'s last evaluation: its status, or "error" when the run could not evaluate it. */
export const PAIR_RESULTS = ["triggered", "resolved", "error"] as const;
export type PairResult = (typeof PAIR_RESULTS)[number];

export const CHANNEL_KINDS = ["webhook", "slack"] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

/** A build's verdict against its baseline, per metric (build_verdicts.verdict; the regressions' verdicts). */
export const BUILD_VERDICTS = ["regressed", "improved", "no_change", "insufficient_data"] as const;
export type BuildVerdict = (typeof BUILD_VERDICTS)[number];

/** One group of a kept verdict (build_verdicts.groups): the regressions endpoint's Group. */
export type VerdictGroup = {
  key: string | null;
  baseline: { sessions: number; median: number | null };
  candidate: { sessions: number; median: number | null };
  diffPct: number | null;
  ci95: [number, number] | null;
  verdict: BuildVerdict;
};

/**
 * The groups a kept verdict was judged in: by platform and by GPU, worst first; for poor_session_share
 * also the overall group, whose sides carry the sessions by verdict (kept since that metric).
 */
export type VerdictGroups = { platform: VerdictGroup[]; gpu: VerdictGroup[]; overall?: VerdictGroup };

/** Data export file formats (workers/api/exports/formats.ts says how ClickHouse writes each). */
export const EXPORT_FORMAT_NAMES = ["ndjson", "parquet", "csv"] as const;
export type ExportFormat = (typeof EXPORT_FORMAT_NAMES)[number];

export const EXPORT_STATUSES = ["queued", "running", "completed", "failed"] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

export const ERASURE_STATUSES = ["running", "completed", "failed"] as const;
export type ErasureStatus = (typeof ERASURE_STATUSES)[number];

/**
 * Who created an API key (api_keys.created_by_type): a signed-in user on the API Keys page, the operator
 * (the admin CLI), or a key or OAuth client through the API. Null on keys made before it was recorded.
 */
export const KEY_CREATOR_TYPES = ["user", "operator", "api_key", "oauth_client"] as const;
export type KeyCreatorType = (typeof KEY_CREATOR_TYPES)[number];

/** One table's part of a player erasure: erasures.steps holds these, in the order they ran. */
export type ErasureStepOutcome = { table: string; rowsRemoved: number };

/**
 * erasures.work: the sessions and UTC days an erasure takes, read once before its first delete.
 * `staged`: the rollup keys of the erased events were staged in ClickHouse then (workers/api/erasure/
 * keys.ts), so the rebuild replaces only those keys' rows; absent for an erasure started before there
 * were staged keys, whose rebuild replaces the days whole.
 */
export type ErasureWork = { identified: string[]; emptied: string[]; days: string[]; staged?: true };

/**
 * data_exports.upload: a segmented export's multipart upload between queue messages
 * (workers/api/exports/segments.ts). Segment i covers timestamps [starts[i], starts[i + 1]) (the last
 * one up to the export's `to`); `carry` bytes at the end of the file so far are not yet a part (R2's
 * parts but the last are all `partBytes` long) and wait in the object `<key>.carry.<next>`.
 */
export type ExportUpload = {
  uploadId: string;
  key: string;
  /** 0 until the first segment has read enough to size the parts. */
  partBytes: number;
  parts: Array<{ partNumber: number; etag: string }>;
  /** Segment start instants, epoch milliseconds; the first is the export's `from`. */
  starts: number[];
  /** The first segment not yet written. */
  next: number;
  rows: number;
  bytes: number;
  carry: number;
  /** The retention horizon the plan counted with, kept for every segment. */
  retainedFromMs: number;
};

/** content_entries.metadata: the free JSON object a content entry carries (the API takes only objects). */
export type ContentMetadata = Record<string, unknown>;

/** One failing cell of a triggered evaluation: its origin and size, the judged mean and its samples. */
export type WorstCell = {
  x: number;
  y: number;
  cellSize: number;
  /** The judged metric's mean over the cell's samples. */
  value: number;
  samples: number;
  /** The share (0 to 1) of the cell's samples that are themselves worse than the threshold. */
  failingShare: number;
};

/**
 * alert_evaluation_events.worst_cells: the scope an evaluation judged (what its links need: the map as
 * events name it, the window in days, the cell size) and its worst failing cells, worst first (none
 * for a resolved one).
 */
export type WorstCellsRecord = { mapId: string; days: number; cellSize: number; cells: WorstCell[] };

/** Who did what an audit_log entry records (workers/api/audit/record.ts says how each is derived). */
export const AUDIT_ACTOR_TYPES = ["user", "api_key", "oauth_client", "operator", "system"] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

/** How the recorded attempt ended: done, refused by a rule or check, or refused for lack of rights. */
export const AUDIT_OUTCOMES = ["success", "failure", "denied"] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

/** audit_log.detail: a few flat facts about the entry (never a secret: no key, token or password). */
export type AuditDetail = Record<string, string | number | boolean | null>;
