import { describe, expect, it } from "vitest";
import { progressObserver, RowCounter } from "../../workers/api/exports/progress.js";

const enc = new TextEncoder();

/** Feeds `text` to a counter in chunks of `size` bytes (so quotes and newlines fall on chunk edges). */
function counted(format: "csv" | "ndjson" | "parquet", text: string, size: number): RowCounter {
  const counter = new RowCounter(format);
  const bytes = enc.encode(text);
  for (let i = 0; i < bytes.length; i += size) {
    counter.add(bytes.subarray(i, i + size));
  }
  return counter;
}

describe("export row counter", () => {
  const csv = 'a,b\n1,"x"\n2,"say ""hi"",\nnewline"\n3,"\n\n"\n';
  const ndjson = '{"a":1,"s":"x\\ny"}\n{"a":2}\n{"a":3}\n';

  it("counts CSV rows after the header, not the newlines inside quotes, however the bytes are chunked", () => {
    for (const size of [1, 2, 3, 7, 1000]) {
      const c = counted("csv", csv, size);
      expect(c.rows, `chunks of ${size}`).toBe(3);
      expect(c.bytes).toBe(enc.encode(csv).length);
    }
  });

  it("counts what a byte-by-byte quote toggle counts, on arbitrary quotes and newlines", () => {
    // A fixed pseudo-random sequence: the same cases every run.
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    for (let round = 0; round < 50; round++) {
      const text = Array.from({ length: 300 }, () => 'a,"\n'[next() % 4]).join("");
      let quoted = false;
      let lines = 0;
      for (const ch of text) {
        if (ch === '"') {
          quoted = !quoted;
        } else if (ch === "\n" && !quoted) {
          lines++;
        }
      }
      const size = 1 + (next() % 40);
      expect(counted("csv", text, size).rows, `round ${round}, chunks of ${size}`).toBe(
        Math.max(0, lines - 1),
      );
    }
  });

  it("counts NDJSON lines, and leaves Parquet's rows unknown while counting its bytes", () => {
    expect(counted("ndjson", ndjson, 5).rows).toBe(3);
    const parquet = counted("parquet", "PAR1\n\n\nPAR1", 3);
    expect(parquet.rows).toBeNull();
    expect(parquet.bytes).toBe(11);
  });

  it("counts each chunk it observes and reports while bytes flow", async () => {
    const counter = new RowCounter("ndjson");
    const reports: Array<number | null> = [];
    // everyMs 0: a report after every chunk, each one awaited by the caller.
    const observe = progressObserver(
      counter,
      async () => {
        reports.push(counter.rows);
      },
      0,
    );
    for (const line of ndjson.split(/(?<=\n)/)) {
      await observe(enc.encode(line));
    }
    expect(reports).toEqual([1, 2, 3]);
    expect(counter.bytes).toBe(enc.encode(ndjson).length);
    // A long interval: the chunks are counted, nothing is reported (no promise to await).
    const quiet = progressObserver(new RowCounter("csv"), async () => {}, 60_000);
    expect(quiet(enc.encode("a\n1\n"))).toBeUndefined();
  });
});
