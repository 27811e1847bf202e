import { api, dataOf } from "../api.js";
import { fmt, h } from "../dom.js";
import type { PageContext } from "../page.js";
import { withStates } from "../states.js";
import { dataTable, pct } from "../table.js";
import { type Control, controlsForm, DAYS_OPTIONS, type Days } from "../url-state.js";

const CONTROLS: Control[] = [
  { name: "days", label: "Period", kind: "select", options: DAYS_OPTIONS, def: "30" },
];

/** Cell shading by the rate (darker is better kept), so a glance finds the weak cohorts. */
function rateCell(v: number | null): Node {
  const td = h("span", { class: "rate" }, pct(v));
  if (v !== null) {
    td.style.background = `rgba(47, 111, 222, ${(Math.min(100, v) / 100) * 0.6 + 0.05})`;
  } else {
    td.title = "The day has not ended yet";
  }
  return td;
}

/** Day-1, day-7 and day-30 retention per cohort (the UTC date of each player's first event). */
export async function playerRetention({ root, projectId }: PageContext): Promise<void> {
  const body = h("section", { class: "panel", "aria-label": "Cohorts" });
  const controls = controlsForm(CONTROLS, (s) => void load(s.days ?? "30"));
  root.append(
    h("h1", {}, "Retention"),
    controls.form,
    h(
      "p",
      { class: "hint" },
      "A cohort is the players whose first event fell on that UTC date; Day N is the share of them seen again N days later. — means that day has not ended yet.",
    ),
    body,
  );

  function load(days: string) {
    return withStates(
      body,
      () =>
        dataOf(
          api.GET("/v1/projects/{id}/retention", {
            params: { path: { id: projectId }, query: { days: days as Days } },
          }),
        ),
      (cohorts) => {
        body.append(
          dataTable(
            "cohorts",
            [
              { label: "Cohort", cell: (c) => c.cohort_date },
              { label: "Players", num: true, cell: (c) => fmt(c.cohort_size) },
              { label: "Day 1", num: true, cell: (c) => rateCell(c.day1) },
              { label: "Day 7", num: true, cell: (c) => rateCell(c.day7) },
              { label: "Day 30", num: true, cell: (c) => rateCell(c.day30) },
            ],
            cohorts,
          ),
        );
      },
      {
        isEmpty: (cohorts) => cohorts.every((c) => c.cohort_size === 0),
        emptyMessage: `No new players in the last ${days} days.`,
      },
    );
  }
  await load(controls.state.days ?? "30");
}
