import { eq } from "drizzle-orm";
import { dataExports } from "../../../schema/pg/schema.js";
import { openClickHouse } from "../../shared/clickhouse.js";
import { configOf } from "../../shared/config.js";
import { attemptsOf, QUEUES, queueRetryDelaySeconds } from "../../shared/queues.js";
import { type Db, openDb } from "../db.js";
import { projectRetention } from "../retention/horizon.js";
import { EXPORT_FORMATS, objectKeyOf } from "./formats.js";
import { streamToR2 } from "./multipart.js";
import { progressObserver, RowCounter } from "./progress.js";
import { countExportRows, type ExportSpec, exportStream } from "./query.js";

export type ExportMessage = { exportId: string };

/** Delivery attempts (the queue's max_retries + 1); the last failure marks the export failed. */
const ATTEMPTS = attemptsOf(QUEUES.exports);
/** Covers the longest stream a consumer may run (15 minutes of wall time). */
const STREAM_TIMEOUT_MS = 14 * 60_000;

/** Runs each queued export outside any request: count, then stream ClickHouse's output into R2. */
export async function consumeExports(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const config = configOf(env);
  const { db, close } = openDb(config);
  try {
    for (const message of batch.messages) {
      const { exportId } = message.body as ExportMessage;
      try {
        await runExport(db, env, exportId);
        message.ack();
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        const final = message.attempts >= ATTEMPTS;
        console.error("export failed", exportId, `attempt ${message.attempts}`, error);
        await db
          .update(dataExports)
          .set(final ? { status: "failed", error, completedAt: new Date() } : { status: "queued", error })
          .where(eq(dataExports.id, exportId));
        if (final) {
          message.ack();
        } else {
          message.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.exports, message.attempts) });
        }
      }
    }
  } finally {
    await close();
  }
}

/** A Parquet row's bytes are not countable in the stream; its columns compress to well under this. */
const PARQUET_ROW_BYTES_BOUND = 1024;

/**
 * The file's expected size once its first bytes have passed (the part size depends on it): the rows
 * counted at the start times the bytes per row so far, with room for later rows being longer.
 */
function expectedBytes(rowCount: number, counter: RowCounter): number {
  if (counter.rows === null) {
    return rowCount * PARQUET_ROW_BYTES_BOUND;
  }
  return Math.ceil((rowCount * counter.bytes * 1.5) / Math.max(1, counter.rows));
}

async function runExport(db: Db, env: Env, exportId: string): Promise<void> {
  const [row] = await db.select().from(dataExports).where(eq(dataExports.id, exportId)).limit(1);
  if (!row || row.status === "completed") {
    return;
  }
  const startedAt = new Date();
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
  const format = row.format;
  // The horizon as the export runs (not as it was requested): a retention shortened in between holds.
  const retention = await projectRetention(db, row.projectId, startedAt.getTime());
  const spec: ExportSpec = {
    projectId: row.projectId,
    from: row.rangeFrom,
    to: row.rangeTo,
    eventName: row.eventName,
    format,
    cutoff: startedAt,
    retainedFrom: new Date(retention?.fromMs ?? startedAt.getTime()),
  };
  const ch = openClickHouse(configOf(env), STREAM_TIMEOUT_MS);
  try {
    const rowCount = await countExportRows(ch, spec);
    await db
      .update(dataExports)
      .set({ rowsExpected: rowCount, rowsWritten: format === "parquet" ? null : 0, bytesWritten: 0 })
      .where(eq(dataExports.id, exportId));
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
      await exportStream(ch, spec),
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
  } finally {
    await ch.close();
  }
}
