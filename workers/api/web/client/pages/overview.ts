import { api, dataOf } from "../api.js";
import { barChart, timeChart } from "../chart.js";
import { fmt, h } from "../dom.js";
import type { PageContext } from "../page.js";
import { withStates } from "../states.js";
import { type Control, controlsForm, DAYS_OPTIONS, type Days } from "../url-state.js";
import { kpi } from "./projects.js";

const CONTROLS: Control[] = [
  { name: "days", label: "Period", kind: "select", options: DAYS_OPTIONS, def: "30" },
];

/** A project at a glance: status KPIs, the window's KPIs, daily active players and the top events. */
export async function overview({ root, projectId }: PageContext): Promise<void> {
  const status = h("section", { class: "panel", "aria-labelledby": "status-h" });
  const body = h("div", {});
  const controls = controlsForm(CONTROLS, (s) => void load(s.days ?? "30"));
  root.append(h("h1", {}, "Overview"), controls.form, status, body);

  void withStates(
    status,
    () => dataOf(api.GET("/v1/projects/{id}/status", { params: { path: { id: projectId } } })),
    (s) => {
      status.append(
        h("h2", { id: "status-h" }, "Status"),
        h(
          "dl",
          { class: "kpis" },
          kpi("Events (24 h)", fmt(s.kpis.events24h)),
          kpi("Events (kept)", fmt(s.kpis.totalEvents)),
          kpi("Retention", `${fmt(s.retention.days)} days, since ${s.retention.retainedFrom}`),
          kpi(
            "Last event",
            s.kpis.lastEventAt ? `${s.kpis.lastEventAt.slice(0, 16).replace("T", " ")} UTC` : "None yet",
          ),
          kpi("Active alert rules", fmt(s.kpis.activeAlertRules)),
        ),
      );
    },
  );

  function load(days: string) {
    return withStates(
      body,
      () =>
        dataOf(
          api.GET("/v1/projects/{id}/dashboard", {
            params: { path: { id: projectId }, query: { days: days as Days } },
          }),
        ),
      (d) => {
        const kpis = h(
          "dl",
          { class: "kpis", "aria-label": `Last ${days} days` },
          kpi("DAU", fmt(d.kpis.dau)),
          kpi("MAU", fmt(d.kpis.mau)),
          kpi(`Sessions (${days} d)`, fmt(d.kpis.sessions)),
          kpi(`Events (${days} d)`, fmt(d.kpis.events)),
        );
        const dau = h("section", { class: "panel" }, h("h2", {}, "Daily active players"));
        const top = h("section", { class: "panel" }, h("h2", {}, "Top events"));
        body.append(kpis, dau, top);
        timeChart(dau, {
          title: "Daily active players",
          dates: d.dailyActiveUsers.map((p) => p.date),
          series: [{ label: "Players", values: d.dailyActiveUsers.map((p) => p.count) }],
        });
        if (d.topEvents.length === 0) {
          top.append(h("p", { class: "state empty" }, "No events in this period."));
          return;
        }
        barChart(top, {
          title: "Top events",
          labels: d.topEvents.map((e) => e.event_name),
          values: d.topEvents.map((e) => e.count),
        });
        top.append(
          h(
            "table",
            { class: "top-events" },
            h("thead", {}, h("tr", {}, h("th", {}, "Event"), h("th", { class: "num" }, "Count"))),
            h(
              "tbody",
              {},
              d.topEvents.map((e) =>
                h("tr", {}, h("td", {}, e.event_name), h("td", { class: "num" }, fmt(e.count))),
              ),
            ),
          ),
        );
      },
      {
        isEmpty: (d) => d.kpis.events === 0,
        emptyMessage: `No events in the last ${days} days. Point an engine SDK at the ingest URL with an ingest key of this project.`,
      },
    );
  }
  await load(controls.state.days ?? "30");
}
