import { h } from "./dom.js";

// A data table as every list page shows one: a caption-less header row, text cells, numeric columns
// right-aligned (class "num"), and `data-table` naming it for readers of the page and the tests. Cells
// whose text is short stay on one line (class "short"); longer ones wrap, anywhere if they must, so a
// long name never makes the table wider than its panel (the layout's CSS).

/** Up to this many characters a cell's text never wraps: dates, counts, buttons, short names. */
const SHORT = 24;

export type Column<T> = { label: string; num?: boolean; cell: (row: T) => Node | string };

export function dataTable<T>(name: string, columns: Column<T>[], rows: T[]): HTMLTableElement {
  return h(
    "table",
    { "data-table": name },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        columns.map((c) => h("th", { scope: "col", class: c.num ? "num" : undefined }, c.label)),
      ),
    ),
    h(
      "tbody",
      {},
      rows.map((r) =>
        h(
          "tr",
          {},
          columns.map((c) => {
            const td = h("td", { class: c.num ? "num" : undefined }, c.cell(r));
            if (!c.num && (td.textContent ?? "").length <= SHORT) {
              td.classList.add("short");
            }
            return td;
          }),
        ),
      ),
    ),
  );
}

/** Percentages as the API gives them (2 decimals); null (not yet measurable) as an em dash. */
export function pct(n: number | null | undefined): string {
  return n === null || n === undefined ? "—" : `${n.toFixed(2)} %`;
}

/** An ISO timestamp as "YYYY-MM-DD HH:MM UTC". */
export function when(iso: string | null | undefined): string {
  return iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : "—";
}
