import uPlot from "uplot";
import { h } from "./dom.js";

// Charts through uPlot (small, maintained, canvas): one wrapper so every page's charts look and size
// alike. The numbers drawn are also written as a table beside the chart for screen readers and tests.

export type Series = { label: string; values: (number | null)[]; color?: string };

const PALETTE = ["#2f6fde", "#d9822b", "#1f7a3a", "#a4298f", "#7a6a00", "#0f8a8a"];

/** A line chart over dates (YYYY-MM-DD, UTC) with a caption and an accessible data table. */
export function timeChart(
  container: HTMLElement,
  opts: { title: string; dates: string[]; series: Series[]; height?: number },
): uPlot {
  const xs = opts.dates.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
  const target = h("div", { class: "chart", role: "img", "aria-label": opts.title });
  container.append(target, dataTable(opts.title, opts.dates, opts.series));
  const width = Math.max(320, Math.min(container.clientWidth || 900, 1400) - 8);
  return new uPlot(
    {
      width,
      height: opts.height ?? 260,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), "Etc/UTC"),
      scales: { x: { time: true } },
      series: [
        {},
        ...opts.series.map((s, i) => ({
          label: s.label,
          stroke: s.color ?? PALETTE[i % PALETTE.length],
          width: 2,
          points: { show: xs.length <= 31 },
        })),
      ],
      axes: [{}, { size: 60 }],
    },
    [xs, ...opts.series.map((s) => s.values)],
    target,
  );
}

/** Horizontal-reading bar chart of labelled values (e.g. top events), drawn by uPlot's bars path. */
export function barChart(
  container: HTMLElement,
  opts: { title: string; labels: string[]; values: number[]; height?: number },
): uPlot {
  const target = h("div", { class: "chart", role: "img", "aria-label": opts.title });
  container.append(target, dataTable(opts.title, opts.labels, [{ label: "Count", values: opts.values }]));
  const width = Math.max(320, Math.min(container.clientWidth || 900, 1400) - 8);
  const xs = opts.labels.map((_, i) => i);
  const bars = uPlot.paths.bars?.({ size: [0.6, 64] });
  return new uPlot(
    {
      width,
      height: opts.height ?? 240,
      scales: { x: { time: false, range: [-0.5, Math.max(0.5, xs.length - 0.5)] } },
      series: [
        {},
        { label: "Count", fill: `${PALETTE[0]}cc`, stroke: PALETTE[0], paths: bars, points: { show: false } },
      ],
      axes: [
        {
          splits: () => xs,
          values: (_u, splits) => splits.map((i) => truncate(opts.labels[i] ?? "", 14)),
          rotate: 0,
        },
        { size: 60 },
      ],
      legend: { show: false },
    },
    [xs, opts.values],
    target,
  );
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/** The chart's numbers as a table (visually hidden: the chart shows them; readers and tests read them). */
function dataTable(title: string, keys: string[], series: Series[]): HTMLElement {
  return h(
    "table",
    { class: "visually-hidden chart-data", "data-chart": title },
    h("caption", {}, title),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        h("th", {}, "Key"),
        series.map((s) => h("th", {}, s.label)),
      ),
    ),
    h(
      "tbody",
      {},
      keys.map((k, i) =>
        h(
          "tr",
          {},
          h("th", {}, k),
          series.map((s) => h("td", {}, String(s.values[i] ?? ""))),
        ),
      ),
    ),
  );
}
