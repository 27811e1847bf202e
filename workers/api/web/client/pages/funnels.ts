import { api, dataOf } from "../api.js";
import { barChart } from "../chart.js";
import { clear, fmt, h } from "../dom.js";
import type { PageContext } from "../page.js";
import { empty, withStates } from "../states.js";
import { dataTable, pct } from "../table.js";
import { type Control, controlsForm, DAYS_OPTIONS, type Days } from "../url-state.js";

const WINDOWS = [
  { value: "3600", label: "1 hour" },
  { value: "21600", label: "6 hours" },
  { value: "86400", label: "1 day" },
  { value: "604800", label: "7 days" },
];

const CONTROLS: Control[] = [
  { name: "days", label: "Period", kind: "select", options: DAYS_OPTIONS, def: "30" },
  { name: "window", label: "Conversion window", kind: "select", options: WINDOWS, def: "86400" },
];

const MAX_STEPS = 8;

/** Steps from the URL (`steps=a,b,c`), as the API takes them. */
function stepsFromUrl(): string[] {
  const raw = new URLSearchParams(location.search).get("steps");
  return raw ? raw.split(",").map((s) => s.trim()) : [];
}

function writeSteps(steps: string[]): void {
  const params = new URLSearchParams(location.search);
  if (steps.length > 0) {
    params.set("steps", steps.join(","));
  } else {
    params.delete("steps");
  }
  const qs = params.toString().replaceAll("%2C", ",");
  history.replaceState(null, "", `${location.pathname}${qs ? `?${qs}` : ""}`);
}

/**
 * Players who did the steps in order within the conversion window. The steps are edited in place
 * (add, remove, move up and down) and applied with "Show funnel"; steps, window and period are the URL.
 */
export async function funnels({ root, projectId }: PageContext): Promise<void> {
  let steps = stepsFromUrl();
  if (steps.length === 0) {
    steps = ["", ""];
  }
  const controls = controlsForm(CONTROLS, () => void run());
  const editor = h("form", { class: "panel step-editor", "aria-labelledby": "steps-h" });
  const body = h("section", { class: "panel", "aria-label": "Funnel" });
  const suggestions = h("datalist", { id: "event-names" });
  root.append(h("h1", {}, "Funnels"), controls.form, editor, suggestions, body);

  // Event names the project has seen recently, offered while typing a step.
  void dataOf(
    api.GET("/v1/projects/{id}/dashboard", { params: { path: { id: projectId }, query: { days: "30" } } }),
  )
    .then((d) => {
      clear(suggestions, ...d.topEvents.map((e) => h("option", { value: e.event_name })));
    })
    .catch(() => undefined);

  function renderEditor(focusIndex?: number, focusWhat = "input"): void {
    const rows = steps.map((name, i) => {
      const input = h("input", {
        id: `step-${i + 1}`,
        name: `step-${i + 1}`,
        type: "text",
        value: name,
        list: "event-names",
        required: true,
        maxlength: 128,
        placeholder: "event name",
      });
      input.addEventListener("input", () => {
        steps[i] = input.value;
      });
      const button = (label: string, what: string, disabled: boolean, act: () => void) =>
        h(
          "button",
          {
            type: "button",
            "aria-label": `${label} step ${i + 1}`,
            "data-act": what,
            disabled,
            onclick: act,
          },
          label === "Move up" ? "↑" : label === "Move down" ? "↓" : "✕",
        );
      return h(
        "li",
        {},
        h("label", { for: `step-${i + 1}` }, `Step ${i + 1}`),
        input,
        button("Move up", "up", i === 0, () => {
          [steps[i - 1], steps[i]] = [steps[i] ?? "", steps[i - 1] ?? ""];
          renderEditor(i - 1, "up");
        }),
        button("Move down", "down", i === steps.length - 1, () => {
          [steps[i + 1], steps[i]] = [steps[i] ?? "", steps[i + 1] ?? ""];
          renderEditor(i + 1, "down");
        }),
        button("Remove", "remove", steps.length <= 2, () => {
          steps.splice(i, 1);
          renderEditor(Math.min(i, steps.length - 1));
        }),
      );
    });
    clear(
      editor,
      h("h2", { id: "steps-h" }, "Steps"),
      h("ol", { class: "steps" }, rows),
      h(
        "p",
        {},
        h(
          "button",
          {
            type: "button",
            disabled: steps.length >= MAX_STEPS,
            onclick: () => {
              steps.push("");
              renderEditor(steps.length - 1);
            },
          },
          "Add step",
        ),
        " ",
        h("button", { type: "submit" }, "Show funnel"),
      ),
    );
    if (focusIndex !== undefined) {
      const li = editor.querySelectorAll("ol.steps li")[focusIndex];
      const target =
        focusWhat === "input"
          ? li?.querySelector("input")
          : (li?.querySelector<HTMLButtonElement>(`button[data-act="${focusWhat}"]:not([disabled])`) ??
            li?.querySelector("input"));
      target?.focus();
    }
  }

  editor.addEventListener("submit", (e) => {
    e.preventDefault();
    steps = steps.map((s) => s.trim());
    writeSteps(steps);
    renderEditor();
    void run();
  });

  function run(): Promise<void> {
    const named = stepsFromUrl();
    if (named.length === 0) {
      empty(
        body,
        "Name at least two steps (event names, in the order players should do them) and choose Show funnel.",
      );
      return Promise.resolve();
    }
    const { days, window } = controls.state;
    return withStates(
      body,
      // The API checks the steps (2 to 8 names of 1 to 128 characters) and says what is wrong.
      () =>
        dataOf(
          api.GET("/v1/projects/{id}/funnels", {
            params: {
              path: { id: projectId },
              // The selects offer only the API's values (readState keeps no other).
              query: {
                steps: named.join(","),
                window: window as "3600" | "21600" | "86400" | "604800",
                days: days as Days,
              },
            },
          }),
        ),
      (result) => {
        barChart(body, {
          title: "Players per step",
          labels: result.map((s) => `${s.step}. ${s.event_name}`),
          values: result.map((s) => s.count),
        });
        body.append(
          dataTable(
            "funnel",
            [
              { label: "Step", num: true, cell: (s) => String(s.step) },
              { label: "Event", cell: (s) => s.event_name },
              { label: "Players", num: true, cell: (s) => fmt(s.count) },
              { label: "Of step 1", num: true, cell: (s) => pct(s.pct) },
              { label: "Drop-off", num: true, cell: (s) => pct(s.drop_off_pct) },
            ],
            result,
          ),
        );
      },
      {
        isEmpty: (result) => (result[0]?.count ?? 0) === 0,
        emptyMessage: `No player did “${named[0]}” in the last ${days} days.`,
      },
    );
  }

  renderEditor();
  await run();
}
