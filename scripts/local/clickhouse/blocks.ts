// chdb's streaming API runs the output format once per block: a format's header (CSVWithNames' column
// names), prefix and suffix (JSON's object, Parquet's magic bytes and footer) come with every block.
// ClickHouse writes them once per response. This module decides, per format, how a streamed response
// is made to read as ClickHouse's: row formats pass through, header formats lose the repeated header,
// and every other format is answered whole (buffered) rather than as concatenated files.

const NEWLINE = 0x0a;
const QUOTE = 0x22;

/** Formats whose output is its rows and nothing else: one block's bytes follow another's as ClickHouse's do. */
const ROW_FORMATS = new Set(
  [
    "JSONEachRow",
    "JSONLines",
    "NDJSON",
    "JSONStringsEachRow",
    "JSONCompactEachRow",
    "JSONCompactStringsEachRow",
    "CSV",
    "TSV",
    "TabSeparated",
    "TSVRaw",
    "TabSeparatedRaw",
    "Raw",
    "TSKV",
    "RowBinary",
    "Native",
    "LineAsString",
    "RawBLOB",
  ].map((f) => f.toLowerCase()),
);

/** Text row formats that may carry a header of names (and types) before their rows. */
const HEADER_BASES = new Set(
  [
    "CSV",
    "TSV",
    "TabSeparated",
    "TSVRaw",
    "TabSeparatedRaw",
    "Raw",
    "JSONCompactEachRow",
    "JSONCompactStringsEachRow",
  ].map((f) => f.toLowerCase()),
);

export type BlockPlan =
  /** Each block's bytes as they are. */
  | { kind: "rows" }
  /** Each block starts with the same header of `records` lines (CSV: lines outside quotes); keep the first. */
  | { kind: "header"; records: number; csv: boolean }
  /** The format frames the whole result (prefix, suffix, footer): answer it whole, not block by block. */
  | { kind: "whole" };

export function blockPlanFor(format: string): BlockPlan {
  const name = format.toLowerCase();
  if (ROW_FORMATS.has(name)) {
    return { kind: "rows" };
  }
  for (const [suffix, records] of [
    ["withnamesandtypes", 2],
    ["withnames", 1],
  ] as const) {
    if (name.endsWith(suffix)) {
      const base = name.slice(0, -suffix.length);
      if (HEADER_BASES.has(base)) {
        return { kind: "header", records, csv: base === "csv" };
      }
    }
  }
  return { kind: "whole" };
}

/**
 * Drops the header every block after the first repeats. The header is found in the first block (its
 * first `records` lines; in CSV a newline inside a quoted name does not end one) and must open every
 * later block byte for byte; a block that does not is an error, never a silently wrong file.
 */
export class HeaderOnce {
  private header: Uint8Array | null = null;

  constructor(private readonly plan: Extract<BlockPlan, { kind: "header" }>) {}

  next(block: Uint8Array): Uint8Array {
    if (this.header === null) {
      this.header = block.slice(0, headerLength(block, this.plan));
      return block;
    }
    const header = this.header;
    if (block.byteLength < header.byteLength || header.some((b, i) => block[i] !== b)) {
      throw new Error("chdb stream: a block did not start with the header of the first one");
    }
    return block.subarray(header.byteLength);
  }
}

function headerLength(block: Uint8Array, plan: { records: number; csv: boolean }): number {
  let quoted = false;
  let records = 0;
  for (let i = 0; i < block.byteLength; i++) {
    const b = block[i];
    if (plan.csv && b === QUOTE) {
      quoted = !quoted;
    } else if (b === NEWLINE && !quoted && ++records === plan.records) {
      return i + 1;
    }
  }
  return block.byteLength;
}
