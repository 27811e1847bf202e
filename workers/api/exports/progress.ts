import type { ExportFormat } from "./formats.js";

const NEWLINE = 0x0a;
const QUOTE = 0x22;

/**
 * Counts the rows of an export as ClickHouse's output streams by, for the progress an export shows
 * while it runs. JSONEachRow writes one row per line; CSVWithNames one per line outside quotes (a
 * quoted field may hold a newline, a doubled quote toggles twice), after the header line. Parquet's rows
 * are not visible in its bytes: `rows` stays null and only the bytes move. A CSV header is the
 * exporter's own single line (formats.ts: csvHeader), so `rows` is the lines after it: the rows.
 */
export class RowCounter {
  rows: number | null;
  bytes = 0;
  private quoted = false;
  private lines = 0;

  /** `header`: CSV's first line names the columns (a later segment of a segmented export has none). */
  constructor(
    private readonly format: ExportFormat,
    private readonly header = true,
  ) {
    this.rows = format === "parquet" ? null : 0;
  }

  add(chunk: Uint8Array): void {
    this.bytes += chunk.byteLength;
    if (this.format === "parquet") {
      return;
    }
    // Native scans (indexOf) rather than a loop over every byte: an export is gigabytes.
    if (this.format === "ndjson") {
      for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, at + 1)) {
        this.lines++;
      }
    } else {
      // The next newline at or after `at`, kept between quoted fields so no byte is scanned twice.
      let at = 0;
      let nl = chunk.indexOf(NEWLINE);
      while (at < chunk.byteLength) {
        if (this.quoted) {
          const close = chunk.indexOf(QUOTE, at);
          if (close === -1) {
            break;
          }
          this.quoted = false;
          at = close + 1;
        } else {
          const quote = chunk.indexOf(QUOTE, at);
          const end = quote === -1 ? chunk.byteLength : quote;
          if (nl !== -1 && nl < at) {
            nl = chunk.indexOf(NEWLINE, at);
          }
          while (nl !== -1 && nl < end) {
            this.lines++;
            nl = chunk.indexOf(NEWLINE, nl + 1);
          }
          if (quote === -1) {
            break;
          }
          this.quoted = true;
          at = quote + 1;
        }
      }
    }
    this.rows = this.format === "csv" && this.header ? Math.max(0, this.lines - 1) : this.lines;
  }
}

/**
 * What streamToR2 calls with each chunk it reads: counts it, and calls `report` at most once per
 * `everyMs` while bytes flow (the caller writes the progress to the export's row). Only a report is
 * awaited: no stream of its own, no promise per chunk (an export is a million chunks).
 */
export function progressObserver(
  counter: RowCounter,
  report: () => Promise<void>,
  everyMs = 1000,
): (chunk: Uint8Array) => Promise<void> | undefined {
  let last = Date.now();
  return (chunk) => {
    counter.add(chunk);
    if (Date.now() - last < everyMs) {
      return undefined;
    }
    last = Date.now();
    return report();
  };
}
