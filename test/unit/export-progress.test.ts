import { describe, expect, it } from "vitest";
import { countingStream, RowCounter } from "../../workers/api/exports/progress.js";

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

  it("counts NDJSON lines, and leaves Parquet's rows unknown while counting its bytes", () => {
    expect(counted("ndjson", ndjson, 5).rows).toBe(3);
    const parquet = counted("parquet", "PAR1\n\n\nPAR1", 3);
    expect(parquet.rows).toBeNull();
    expect(parquet.bytes).toBe(11);
  });

  it("passes the stream through unchanged and reports while it flows", async () => {
    const counter = new RowCounter("ndjson");
    const reports: Array<number | null> = [];
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const line of ndjson.split(/(?<=\n)/)) {
          controller.enqueue(enc.encode(line));
        }
        controller.close();
      },
    });
    // everyMs 0: a report after every chunk.
    const out = countingStream(
      source,
      counter,
      async () => {
        reports.push(counter.rows);
      },
      0,
    );
    const text = await new Response(out).text();
    expect(text).toBe(ndjson);
    expect(reports).toEqual([1, 2, 3]);
  });
});
