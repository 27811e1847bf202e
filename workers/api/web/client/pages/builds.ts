import { api, dataOf } from "../api.js";
import { fmt, h } from "../dom.js";
import type { PageContext } from "../page.js";
import { withStates } from "../states.js";
import { dataTable, when } from "../table.js";
import { type Control, controlsForm, DAYS_OPTIONS, type Days } from "../url-state.js";

const CONTROLS: Control[] = [
  { name: "days", label: "Period", kind: "select", options: DAYS_OPTIONS, def: "30" },
];

/** The builds that sent performance samples in the period, newest first, each linking to Compare. */
export async function builds({ root, projectId }: PageContext): Promise<void> {
  const body = h("section", { class: "panel", "aria-label": "Builds" });
  const controls = controlsForm(CONTROLS, (s) => void load(s.days ?? "30"));
  root.append(h("h1", {}, "Builds"), controls.form, body);

  function load(days: string) {
    return withStates(
      body,
      () =>
        dataOf(
          api.GET("/v1/projects/{id}/builds", {
            params: { path: { id: projectId }, query: { days: days as Days } },
          }),
        ),
      (list) => {
        body.append(
          dataTable(
            "builds",
            [
              { label: "Build", cell: (b) => b.build_id },
              { label: "First seen", cell: (b) => when(b.first_seen) },
              { label: "Last seen", cell: (b) => when(b.last_seen) },
              { label: "Events", num: true, cell: (b) => fmt(b.event_count) },
              { label: "Sessions", num: true, cell: (b) => fmt(b.session_count) },
              { label: "Players", num: true, cell: (b) => fmt(b.player_count) },
              {
                label: "Compare",
                cell: (b) => {
                  // Against the build before it in the list (the previous release), when there is one.
                  const prev = list[list.indexOf(b) + 1];
                  return prev
                    ? h(
                        "a",
                        {
                          href: `/projects/${projectId}/compare?baseline=${encodeURIComponent(prev.build_id)}&candidate=${encodeURIComponent(b.build_id)}`,
                        },
                        `vs ${prev.build_id}`,
                      )
                    : "—";
                },
              },
            ],
            list,
          ),
        );
      },
      {
        isEmpty: (list) => list.length === 0,
        emptyMessage: `No build sent performance samples in the last ${days} days.`,
      },
    );
  }
  await load(controls.state.days ?? "30");
}
