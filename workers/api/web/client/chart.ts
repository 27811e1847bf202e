import uPlot from "uplot";
import { barRange } from "./bar-range.js";
import { h } from "./dom.js";

// Charts through uPlot (small, maintained, canvas): one wrapper so every page's charts look and size
// alike, each as wide as its container and following it when the window is resized. The numbers drawn
// are also written as a table beside the chart for screen readers and tests.

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
  const width = widthIn(container);
  const height = opts.height ?? 260;
  const chart = new uPlot(
    {
      width,
      height,
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
  return fitted(container, chart, height);
}

/** Horizontal-reading bar chart of labelled values (e.g. top events), drawn by uPlot's bars path. */
export function barChart(
  container: HTMLElement,
  opts: { title: string; labels: string[]; values: number[]; height?: number },
): uPlot {
  const target = h("div", { class: "chart", role: "img", "aria-label": opts.title });
  container.append(target, dataTable(opts.title, opts.labels, [{ label: "Count", values: opts.values }]));
  const width = widthIn(container);
  const xs = opts.labels.map((_, i) => i);
  const bars = uPlot.paths.bars?.({ size: [0.6, 64] });
  const height = opts.height ?? 240;
  const chart = new uPlot(
    {
      width,
      height,
      scales: {
        x: { time: false, range: [-0.5, Math.max(0.5, xs.length - 0.5)] },
        // A bar's length is its value: the axis always holds zero (uPlot would fit it to the data).
        y: { range: (_u, min, max) => barRange(min, max) },
      },
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
  return fitted(container, chart, height);
}

/** The width a chart takes in `container`: its content box (no wider than a readable 1400 px). */
function widthIn(container: HTMLElement): number {
  const style = getComputedStyle(container);
  const inner =
    container.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight);
  return Math.max(240, Math.min(inner || 900, 1400));
}

/** Keeps `chart` as wide as `container` while the container is in the page. */
function fitted(container: HTMLElement, chart: uPlot, height: number): uPlot {
  let width = chart.width;
  const observer = new ResizeObserver(() => {
    if (!container.isConnected) {
      observer.disconnect();
      return;
    }
    const next = widthIn(container);
    if (next !== width) {
      width = next;
      chart.setSize({ width, height });
    }
  });
  observer.observe(container);
  return chart;
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

/**
 * The chart's numbers as a table (visually hidden: the chart shows them; readers and tests read them),
 * in a hidden box: a table is never narrower than its content, so hidden itself it would still widen
 * the page.
 */
function dataTable(title: string, keys: string[], series: Series[]): HTMLElement {
  return h(
    "div",
    { class: "visually-hidden" },
    h(
      "table",
      { class: "chart-data", "data-chart": title },
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
    ),
  );
}
