// Plain-text tables for the benchmarks' output.

/** Rows under a header, each column as wide as its widest cell. */
export function printTable(header: string[], rows: string[][]) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  console.log(line(header));
  for (const r of rows) {
    console.log(line(r));
  }
}
