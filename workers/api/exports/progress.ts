import type { ExportFormat } from "./formats.js";

const NEWLINE = 0x0a;
const QUOTE = 0x22;

/**
 * Counts the rows of an export as ClickHouse's output streams by, for the progress an export shows
 * while it runs. JSONEachRow writes one row per line; CSVWithNames one per line outside quotes (a
 * quoted field may hold a newline, a doubled quote toggles twice), after the header line. Parquet's rows
 * are not visible in its bytes: `rows` stays null and only the bytes move.
 */
export class RowCounter {
  rows: number | null;
  bytes = 0;
  private quoted = false;
  private lines = 0;

  constructor(private readonly format: ExportFormat) {
    this.rows = format === "parquet" ? null : 0;
  }

  add(chunk: Uint8Array): void {
    this.bytes += chunk.byteLength;
    if (this.format === "parquet") {
      return;
    }
    for (const byte of chunk) {
      if (byte === QUOTE && this.format === "csv") {
        this.quoted = !this.quoted;
      } else if (byte === NEWLINE && !this.quoted) {
        this.lines++;
      }
    }
    this.rows = this.format === "csv" ? Math.max(0, this.lines - 1) : this.lines;
  }
}

/**
 * Passes a stream through unchanged, counting it, and calls `report` at most once per `everyMs` while
 * bytes flow (the caller writes the progress to the export's row).
 */
export function countingStream(
  source: ReadableStream<Uint8Array>,
  counter: RowCounter,
  report: () => Promise<void>,
  everyMs = 1000,
): ReadableStream<Uint8Array> {
  let last = Date.now();
  return source.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      async transform(chunk, controller) {
        counter.add(chunk);
        controller.enqueue(chunk);
        if (Date.now() - last >= everyMs) {
          last = Date.now();
          await report();
        }
      },
    }),
  );
}
