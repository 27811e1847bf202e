import { api, dataOf, type Schemas } from "../api.js";
import { barChart, timeChart } from "../chart.js";
import { fmt, h } from "../dom.js";
import type { PageContext } from "../page.js";
import { withStates } from "../states.js";
import { dataTable } from "../table.js";
import { type Control, controlsForm, DAYS_OPTIONS, type Days } from "../url-state.js";
import { kpi } from "./projects.js";

const METRICS = [
  { value: "count", label: "Events" },
  { value: "unique_players", label: "Unique players" },
];
const GROUPS = [
  { value: "day", label: "Day" },
  { value: "week", label: "Week" },
  { value: "month", label: "Month" },
  { value: "event_name", label: "Event name" },
  { value: "map_id", label: "Map" },
  { value: "platform", label: "Platform" },
  { value: "build_id", label: "Build" },
];
const TIME_GROUPS = new Set(["day", "week", "month"]);

const CONTROLS: Control[] = [
  { name: "metric", label: "Metric", kind: "select", options: METRICS, def: "count" },
  { name: "groupBy", label: "Group by", kind: "select", options: GROUPS, def: "day" },
  { name: "days", label: "Period", kind: "select", options: DAYS_OPTIONS, def: "30" },
  {
    name: "limit",
    label: "Groups",
    kind: "select",
    options: ["10", "20", "50"].map((v) => ({ value: v, label: `Top ${v}` })),
    def: "10",
  },
  { name: "eventName", label: "Event name (optional)", kind: "text", def: "", placeholder: "all events" },
];

/** Events or unique players over time (line) or by a dimension (bars), with the numbers as a table. */
export async function insights({ root, projectId }: PageContext): Promise<void> {
  const body = h("section", { class: "panel", "aria-label": "Insight" });
  const controls = controlsForm(CONTROLS, () => void load());
  root.append(h("h1", {}, "Insights"), controls.form, body);

  function load() {
    const s = controls.state;
    const metricLabel = METRICS.find((m) => m.value === s.metric)?.label ?? "Value";
    const groupLabel = GROUPS.find((g) => g.value === s.groupBy)?.label ?? "Group";
    return withStates(
      body,
      () =>
        dataOf(
          api.GET("/v1/projects/{id}/insights", {
            params: {
              path: { id: projectId },
              // The selects offer only the API's values (readState keeps no other).
              query: {
                metric: s.metric as Schemas["Insights"]["metric"],
                groupBy: s.groupBy as Schemas["Insights"]["groupBy"],
                days: s.days as Days,
                limit: s.limit as "10" | "20" | "50",
                eventName: s.eventName,
              },
            },
          }),
        ),
      (d) => {
        body.append(h("dl", { class: "kpis" }, kpi(`${metricLabel} (${d.days} d)`, fmt(d.total))));
        const title = `${metricLabel} by ${groupLabel.toLowerCase()}`;
        if (TIME_GROUPS.has(d.groupBy)) {
          timeChart(body, {
            title,
            dates: d.groups.map((g) => g.key),
            series: [{ label: metricLabel, values: d.groups.map((g) => g.value) }],
          });
        } else {
          barChart(body, {
            title,
            labels: d.groups.map((g) => g.key || "(none)"),
            values: d.groups.map((g) => g.value),
          });
        }
        body.append(
          dataTable(
            "insights",
            [
              // Events without the dimension form the key "" (the API's answer); say so rather than blank.
              { label: groupLabel, cell: (g) => g.key || "(none)" },
              { label: metricLabel, num: true, cell: (g) => fmt(g.value) },
            ],
            d.groups,
          ),
        );
      },
      {
        isEmpty: (d) => d.total === 0,
        emptyMessage: `No events${s.eventName ? ` named “${s.eventName}”` : ""} in the last ${s.days} days.`,
      },
    );
  }
  await load();
}
