import { and, eq, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import type { ExportUpload } from "../../../schema/pg/columns.js";
import { dataExports } from "../../../schema/pg/schema.js";
import { openClickHouse } from "../../shared/clickhouse.js";
import { configOf, localKnobsOf } from "../../shared/config.js";
import { attemptsOf, QUEUES, queueRetryDelaySeconds } from "../../shared/queues.js";
import { projectDataRetention } from "../data-retention/horizon.js";
import { type Db, openDb } from "../db.js";
import { EXPORT_FORMATS, objectKeyOf } from "./formats.js";
import { streamToR2 } from "./multipart.js";
import { progressObserver, RowCounter } from "./progress.js";
import { countExportRows, type ExportSpec, exportBuckets, exportStream } from "./query.js";
import {
  abandonUpload,
  expectedBytes,
  MESSAGE_BUDGET_MS,
  planSegments,
  SEGMENT_ROWS,
  startUpload,
  writeSegment,
} from "./segments.js";

/**
 * The exports queue's schema: one export to run. `segment`: the segment the sender expected next
 * (informational: a delivery resumes from the stored state).
 */
export const ExportMessage = z.object({ exportId: z.string(), segment: z.number().int().optional() });
export type ExportMessage = z.output<typeof ExportMessage>;

/** Delivery attempts (the queue's max_retries + 1); the last failure marks the export failed. */
const ATTEMPTS = attemptsOf(QUEUES.exports);
/** Covers the longest stream a consumer may run (15 minutes of wall time). */
const STREAM_TIMEOUT_MS = 14 * 60_000;
/**
 * Parquet cannot be appended to: its file is written by one query in one run, so its rows are bounded
 * by what ClickHouse writes in MAX_EXPORT_SECONDS. NDJSON and CSV have no such bound (segments).
 */
export const PARQUET_MAX_ROWS = 20_000_000;

/**
 * The export consumer's bounds, where the local knobs (LOCAL_KNOBS, workers/shared/config.ts; every
 * deployed Worker has none) may lower them: exportSegmentRows plans segments of that many rows instead
 * of SEGMENT_ROWS; exportSegmentsPerMessage bounds the segments one message writes before it sends the
 * next; exportFaultAtSegment = k makes the first attempt of a delivery throw once segment k's parts and
 * carry are stored, before its state is; exportParquetMaxRows lowers PARQUET_MAX_ROWS; exportBlockRows sets the export query's
 * max_block_size, so a small export streams in many blocks.
 */
type Knobs = {
  segmentRows: number;
  perMessage: number;
  faultAt: number | null;
  parquetMaxRows: number;
  blockRows: number | null;
};

function knobsOf(env: Env): Knobs {
  const k = localKnobsOf(env);
  return {
    segmentRows: k.exportSegmentRows && k.exportSegmentRows > 0 ? k.exportSegmentRows : SEGMENT_ROWS,
    perMessage:
      k.exportSegmentsPerMessage && k.exportSegmentsPerMessage > 0
        ? k.exportSegmentsPerMessage
        : Number.POSITIVE_INFINITY,
    faultAt: k.exportFaultAtSegment,
    parquetMaxRows: k.exportParquetMaxRows ?? PARQUET_MAX_ROWS,
    blockRows: k.exportBlockRows && k.exportBlockRows > 0 ? k.exportBlockRows : null,
  };
}

/**
 * Runs each queued export outside any request. NDJSON and CSV go in time segments (segments.ts), as
 * many per message as its wall time allows, then the next message; Parquet in one run.
 */
export async function consumeExports(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const config = configOf(env);
  const { db, close } = openDb(config);
  try {
    for (const message of batch.messages) {
      const read = ExportMessage.safeParse(message.body);
      if (!read.success) {
        // No export to mark failed: retrying cannot make it readable.
        console.error("unreadable export message dropped", message.id);
        message.ack();
        continue;
      }
      const { exportId, segment } = read.data;
      try {
        await runExport(db, env, exportId, message.attempts, segment);
        message.ack();
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        const final = message.attempts >= ATTEMPTS || err instanceof ExportRefused;
        console.error("export failed", exportId, `attempt ${message.attempts}`, error);
        const [failed] = await db
          .update(dataExports)
          .set(
            final
              ? { status: "failed", error, completedAt: new Date(), upload: null }
              : {
                  status: "queued",
                  error,
                  // A segmented export resumes from its stored state: its progress goes back to what that
                  // state holds, not to what the failed segment had streamed when it was last reported.
                  rowsWritten: sql`coalesce((${dataExports.upload}->>'rows')::int, ${dataExports.rowsWritten})`,
                  bytesWritten: sql`coalesce((${dataExports.upload}->>'bytes')::float8, ${dataExports.bytesWritten})`,
                },
          )
          .where(eq(dataExports.id, exportId))
          .returning({ upload: dataExports.upload });
        if (final) {
          message.ack();
        } else {
          message.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.exports, message.attempts) });
        }
        if (final && failed?.upload) {
          await abandonUpload(env.EXPORTS, failed.upload);
        }
      }
    }
  } finally {
    await close();
  }
}

type ExportRow = typeof dataExports.$inferSelect;

async function runExport(
  db: Db,
  env: Env,
  exportId: string,
  attempts: number,
  segment: number | undefined,
): Promise<void> {
  const [row] = await db.select().from(dataExports).where(eq(dataExports.id, exportId)).limit(1);
  if (!row || row.status === "completed" || row.status === "failed") {
    return;
  }
  const ch = openClickHouse(configOf(env), STREAM_TIMEOUT_MS);
  try {
    if (row.format === "parquet") {
      await runWhole(db, env, ch, row, knobsOf(env));
    } else {
      await runSegments(db, env, ch, row, attempts, segment);
    }
  } finally {
    await ch.close();
  }
}

/** The export's spec as of `startedAt` (its cutoff), with the retention horizon it runs under. */
async function specOf(db: Db, row: ExportRow, startedAt: Date, retainedFromMs?: number): Promise<ExportSpec> {
  // The horizon as the export runs (not as it was requested): a retention shortened in between holds.
  const retainedFrom =
    retainedFromMs ??
    (await projectDataRetention(db, row.projectId, startedAt.getTime()))?.fromMs ??
    startedAt.getTime();
  return {
    projectId: row.projectId,
    from: row.rangeFrom,
    to: row.rangeTo,
    eventName: row.eventName,
    format: row.format,
    cutoff: startedAt,
    retainedFrom: new Date(retainedFrom),
  };
}

async function markRunning(db: Db, exportId: string, startedAt: Date): Promise<void> {
  await db
    .update(dataExports)
    .set({
      status: "running",
      startedAt,
      error: null,
      rowsExpected: null,
      rowsWritten: null,
      bytesWritten: null,
    })
    .where(eq(dataExports.id, exportId));
}

/**
 * NDJSON and CSV: the first delivery plans the segments from the rows per second-bucket and starts the
 * upload; each delivery then writes segments from the stored state while its wall time lasts, and sends
 * the next message if segments remain.
 */
async function runSegments(
  db: Db,
  env: Env,
  ch: ReturnType<typeof openClickHouse>,
  row: ExportRow,
  attempts: number,
  segment: number | undefined,
): Promise<void> {
  const knobs = knobsOf(env);
  const began = Date.now();
  let state: ExportUpload | null = row.upload;
  // A first delivery finds the state where its sender left it (the sender commits, then sends): if not,
  // it is a duplicate of a message another delivery already carries on (or of the first message, once
  // planned), and stops. A retry (attempts > 1) resumes from the state, wherever its own run left it.
  if (attempts === 1 && state && state.next !== (segment ?? 0)) {
    console.warn(
      "export message dropped as a duplicate",
      row.id,
      `segment ${segment ?? 0}, next ${state.next}`,
    );
    return;
  }
  let startedAt = row.startedAt ?? new Date();
  if (!state) {
    startedAt = new Date();
    await markRunning(db, row.id, startedAt);
    const spec = await specOf(db, row, startedAt);
    const { buckets } = await exportBuckets(ch, spec);
    const rowsExpected = buckets.reduce((sum, b) => sum + b.rows, 0);
    const starts = planSegments(buckets, spec.from.getTime(), knobs.segmentRows);
    const key = objectKeyOf(row.projectId, row.id, row.format);
    state = await startUpload(env.EXPORTS, key, row.format, starts, spec.retainedFrom.getTime());
    const planned = await db
      .update(dataExports)
      .set({ upload: state, rowsExpected, rowsWritten: 0, bytesWritten: 0 })
      .where(and(eq(dataExports.id, row.id), isNull(dataExports.upload)))
      .returning({ id: dataExports.id });
    if (planned.length === 0) {
      // A duplicate delivery planned first: its upload is the export's.
      await env.EXPORTS.resumeMultipartUpload(key, state.uploadId)
        .abort()
        .catch(() => {});
      return;
    }
    row = { ...row, rowsExpected };
  } else if (row.status !== "running") {
    await db.update(dataExports).set({ status: "running", error: null }).where(eq(dataExports.id, row.id));
  }
  const spec = await specOf(db, row, startedAt, state.retainedFromMs);
  const run = {
    db,
    bucket: env.EXPORTS,
    ch,
    exportId: row.id,
    format: row.format,
    spec,
    rowsExpected: row.rowsExpected ?? 0,
    blockRows: knobs.blockRows,
  };
  let written = 0;
  while (state) {
    if (written >= knobs.perMessage || Date.now() - began > MESSAGE_BUDGET_MS) {
      await env.EXPORTS_QUEUE.send({ exportId: row.id, segment: state.next } satisfies ExportMessage);
      return;
    }
    const k = state.next;
    const fault =
      knobs.faultAt === k && attempts === 1
        ? () => {
            throw new Error(`exportFaultAtSegment (a local knob): segment ${k} stored, its state not`);
          }
        : undefined;
    state = await writeSegment({ ...run, fault }, state);
    written++;
  }
}

/** Parquet: one query, one upload, in this delivery (a Parquet file cannot be appended to). */
async function runWhole(
  db: Db,
  env: Env,
  ch: ReturnType<typeof openClickHouse>,
  row: ExportRow,
  knobs: Knobs,
): Promise<void> {
  const maxRows = knobs.parquetMaxRows;
  const exportId = row.id;
  const startedAt = new Date();
  await markRunning(db, exportId, startedAt);
  const format = row.format;
  const spec = await specOf(db, row, startedAt);
  const rowCount = await countExportRows(ch, spec);
  await db
    .update(dataExports)
    .set({ rowsExpected: rowCount, rowsWritten: null, bytesWritten: 0 })
    .where(eq(dataExports.id, exportId));
  if (rowCount > maxRows) {
    // Not retried into the same wall: the export fails at once with the rule that refused it.
    throw new ExportRefused(
      `format: a Parquet export holds at most ${maxRows.toLocaleString("en-US")} events (one file, ` +
        `written in one run); this one has ${rowCount.toLocaleString("en-US")}: narrow its range, filter by event ` +
        "name, or choose ndjson or csv (written in segments, no such limit)",
    );
  }
  const key = objectKeyOf(row.projectId, exportId, format);
  const counter = new RowCounter(format);
  // Best effort: a progress write that fails (Postgres busy for a moment) is logged and skipped, not
  // allowed to throw away minutes of streaming; the next one, or the completion, writes the figures.
  const progress = async () => {
    try {
      await db
        .update(dataExports)
        .set({ rowsWritten: counter.rows, bytesWritten: counter.bytes })
        .where(eq(dataExports.id, exportId));
    } catch (err) {
      const cause = err instanceof Error ? (err.cause ?? err) : err;
      console.warn("export progress not written", exportId, cause instanceof Error ? cause.message : cause);
    }
  };
  const uploaded = await streamToR2(
    env.EXPORTS,
    key,
    await exportStream(ch, spec, { blockRows: knobs.blockRows }),
    EXPORT_FORMATS[format].contentType,
    progressObserver(counter, progress),
    () => expectedBytes(rowCount, counter),
  );
  await db
    .update(dataExports)
    .set({
      status: "completed",
      rowCount,
      sizeBytes: uploaded.bytes,
      rowsWritten: counter.rows ?? rowCount,
      bytesWritten: uploaded.bytes,
      objectKey: key,
      completedAt: new Date(),
    })
    .where(eq(dataExports.id, exportId));
}

/** An export refused by a rule: failed at once, not retried. */
class ExportRefused extends Error {}
