import type { ClickHouseClient } from "@clickhouse/client-web";
import { and, eq, sql } from "drizzle-orm";
import type { ExportUpload } from "../../../schema/pg/columns.js";
import { dataExports } from "../../../schema/pg/schema.js";
import type { Db } from "../db.js";
import { EXPORT_FORMATS, type ExportFormat } from "./formats.js";
import { PartWriter } from "./multipart.js";
import { progressObserver, RowCounter } from "./progress.js";
import { type ExportSpec, exportStream } from "./query.js";

/**
 * A segment's rows: one ClickHouse query and one stretch of the upload. At ~730 bytes a row (NDJSON;
 * CSV is shorter) 3M rows are ~2.2 GB, under 3 minutes at the 12-18 MB/s measured locally: well inside
 * ClickHouse's 600 s per query and a consumer's 15 minutes. A bucket (a second or more) holding more
 * rows than this is one segment by itself.
 */
export const SEGMENT_ROWS = 3_000_000;
/** A message starts no segment after this much wall time: the last one it starts still ends in time. */
export const MESSAGE_BUDGET_MS = 5 * 60_000;

/**
 * Segment starts (epoch ms) from the rows per bucket, in order: greedy ranges of at most `maxRows`
 * rows, cut only at bucket starts (so rows of one timestamp never straddle two segments). The first
 * segment starts at `fromMs`; the last one ends at the export's `to`.
 */
export function planSegments(
  buckets: Array<{ at: number; rows: number }>,
  fromMs: number,
  maxRows: number,
): number[] {
  const starts = [fromMs];
  let rows = 0;
  for (const bucket of buckets) {
    if (rows > 0 && rows + bucket.rows > maxRows && bucket.at > (starts.at(-1) as number)) {
      starts.push(bucket.at);
      rows = 0;
    }
    rows += bucket.rows;
  }
  return starts;
}

/** The carried bytes waiting for segment `segment`: the tail of the segment before it. */
export function carryKeyOf(key: string, segment: number): string {
  return `${key}.carry.${segment}`;
}

/** A Parquet row's bytes are not countable in the stream; its columns compress to well under this. */
const PARQUET_ROW_BYTES_BOUND = 1024;

/**
 * The file's expected size once its first bytes have passed (the part size depends on it): the rows
 * counted at the start times the bytes per row so far, with room for later rows being longer.
 */
export function expectedBytes(rowCount: number, counter: RowCounter): number {
  if (counter.rows === null) {
    return rowCount * PARQUET_ROW_BYTES_BOUND;
  }
  return Math.ceil((rowCount * counter.bytes * 1.5) / Math.max(1, counter.rows));
}

export type SegmentRun = {
  db: Db;
  bucket: R2Bucket;
  ch: ClickHouseClient;
  exportId: string;
  format: ExportFormat;
  /** The whole export's spec; a segment narrows its range. */
  spec: ExportSpec;
  rowsExpected: number;
  /** Local stacks and tests only: the export query's max_block_size (consumer.ts, the exportBlockRows local knob). */
  blockRows?: number | null;
  /** Test hook: throws after the segment's parts and carry are stored, before its state is. */
  fault?: () => void;
};

/**
 * Writes segment `state.next` of a segmented export: its rows after the carried bytes, as parts
 * numbered after those already uploaded; then stores its own tail as the next carry and commits the
 * state, only if no other delivery moved it meanwhile. The last segment uploads its tail as the last
 * part, completes the object and marks the export completed. Run again after a failure, it redoes the
 * same segment from the same state: same part numbers (overwritten), same carry, same rows.
 * Returns the new state, or null once the export is completed (or another delivery moved on).
 */
export async function writeSegment(run: SegmentRun, state: ExportUpload): Promise<ExportUpload | null> {
  const { db, bucket, exportId, format, spec } = run;
  const k = state.next;
  const last = k === state.starts.length - 1;
  const done = last ? await bucket.head(state.key) : null;
  if (done) {
    // An earlier delivery completed the object (an object shows only once completed) but not the record.
    await markCompleted(db, exportId, state.key, run.rowsExpected, done.size);
    return null;
  }
  const from = new Date(state.starts[k] as number);
  const to = last ? spec.to : new Date(state.starts[k + 1] as number);
  let carry: Uint8Array | undefined;
  if (state.carry > 0) {
    const object = await bucket.get(carryKeyOf(state.key, k));
    if (!object) {
      throw new Error(`export ${exportId}: the carried bytes of segment ${k} are missing`);
    }
    carry = new Uint8Array(await object.arrayBuffer());
    if (carry.byteLength !== state.carry) {
      throw new Error(
        `export ${exportId}: segment ${k} carries ${carry.byteLength} bytes, not ${state.carry}`,
      );
    }
  }
  const upload = bucket.resumeMultipartUpload(state.key, state.uploadId);
  const counter = new RowCounter(format, k === 0);
  const writer = new PartWriter(upload, {
    firstPart: state.parts.length + 1,
    partBytes: state.partBytes,
    carry,
    expectedBytes: () => expectedBytes(run.rowsExpected, counter),
  });
  // Best effort: a progress write that fails (Postgres busy for a moment) is logged and skipped, not
  // allowed to throw away minutes of streaming; the next one, or the commit, writes the figures.
  const progress = async () => {
    try {
      await db
        .update(dataExports)
        .set({ rowsWritten: state.rows + (counter.rows ?? 0), bytesWritten: state.bytes + counter.bytes })
        .where(eq(dataExports.id, exportId));
    } catch (err) {
      const cause = err instanceof Error ? (err.cause ?? err) : err;
      console.warn("export progress not written", exportId, cause instanceof Error ? cause.message : cause);
    }
  };
  const observe = progressObserver(counter, progress);
  const began = Date.now();
  let tail: Uint8Array;
  try {
    for await (const chunk of await exportStream(
      run.ch,
      { ...spec, from, to },
      { header: k === 0, blockRows: run.blockRows },
    )) {
      const observed = observe(chunk);
      if (observed) {
        await observed;
      }
      await writer.write(chunk);
    }
    tail = await writer.finish(last);
  } catch (err) {
    await writer.settle();
    throw err;
  }
  const next: ExportUpload = {
    ...state,
    partBytes: writer.size,
    parts: [...state.parts, ...writer.parts],
    next: k + 1,
    rows: state.rows + (counter.rows ?? 0),
    bytes: state.bytes + counter.bytes,
    carry: tail.byteLength,
  };
  if (tail.byteLength > 0) {
    await bucket.put(carryKeyOf(state.key, k + 1), tail);
  }
  console.log(
    `export ${exportId} segment ${k + 1}/${state.starts.length}: ${counter.rows} rows, ${counter.bytes} bytes, ` +
      `${writer.parts.length} parts, ${tail.byteLength} bytes carried, ${Date.now() - began} ms`,
  );
  run.fault?.();
  if (last) {
    await complete(bucket, upload, next);
    await bucket.delete(carryKeyOf(state.key, k)).catch(() => {});
    await markCompleted(db, exportId, state.key, next.rows, next.bytes);
    return null;
  }
  const moved = await db
    .update(dataExports)
    .set({ upload: next, rowsWritten: next.rows, bytesWritten: next.bytes })
    .where(and(eq(dataExports.id, exportId), sql`(${dataExports.upload}->>'next')::int = ${k}`))
    .returning({ id: dataExports.id });
  if (moved.length === 0) {
    return null;
  }
  await bucket.delete(carryKeyOf(state.key, k)).catch(() => {});
  return next;
}

/** The export's one completion: its figures, the object, and the upload state cleared. */
async function markCompleted(
  db: Db,
  exportId: string,
  key: string,
  rows: number,
  bytes: number,
): Promise<void> {
  await db
    .update(dataExports)
    .set({
      status: "completed",
      rowCount: rows,
      sizeBytes: bytes,
      rowsWritten: rows,
      bytesWritten: bytes,
      objectKey: key,
      completedAt: new Date(),
      upload: null,
    })
    .where(and(eq(dataExports.id, exportId), eq(dataExports.status, "running")));
}

/** Completes the object; a completion already done (its reply lost, or a duplicate) is one if the object holds every byte. */
async function complete(bucket: R2Bucket, upload: R2MultipartUpload, state: ExportUpload): Promise<void> {
  try {
    await upload.complete(state.parts);
  } catch (err) {
    const object = await bucket.head(state.key);
    if (object?.size !== state.bytes) {
      throw err;
    }
  }
}

/** Starts a segmented export's upload: an empty state at segment 0. */
export async function startUpload(
  bucket: R2Bucket,
  key: string,
  format: ExportFormat,
  starts: number[],
  retainedFromMs: number,
): Promise<ExportUpload> {
  const upload = await bucket.createMultipartUpload(key, {
    httpMetadata: { contentType: EXPORT_FORMATS[format].contentType },
  });
  return {
    uploadId: upload.uploadId,
    key,
    partBytes: 0,
    parts: [],
    starts,
    next: 0,
    rows: 0,
    bytes: 0,
    carry: 0,
    retainedFromMs,
  };
}

/** After an export's last failed attempt: the unfinished upload and its carried bytes go. */
export async function abandonUpload(bucket: R2Bucket, state: ExportUpload): Promise<void> {
  await bucket
    .resumeMultipartUpload(state.key, state.uploadId)
    .abort()
    .catch(() => {});
  await bucket
    .delete([carryKeyOf(state.key, state.next), carryKeyOf(state.key, state.next + 1)])
    .catch(() => {});
}
