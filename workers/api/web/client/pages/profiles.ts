import { api, dataOf, type Schemas } from "../api.js";
import { fmt, h } from "../dom.js";
import {
  actionAlert,
  type FieldEl,
  field,
  numberOrNull,
  onSubmit,
  rowAction,
  textOrNull,
} from "../edit-form.js";
import { METRICS, type Metric } from "../metrics.js";
import type { PageContext } from "../page.js";
import { withStates } from "../states.js";
import { dataTable, when } from "../table.js";

const FILTERS = [
  { key: "platform", label: "Platform", placeholder: "any, e.g. Windows" },
  { key: "resolution", label: "Resolution", placeholder: "any, e.g. 1920x1080" },
  { key: "buildConfig", label: "Build configuration", placeholder: "any, e.g. Shipping" },
  { key: "gpu", label: "GPU", placeholder: "any" },
  { key: "storage", label: "Storage", placeholder: "any, e.g. SSD" },
] as const;

type FilterKey = (typeof FILTERS)[number]["key"];
type ThresholdKey = Metric["profile"]["good" | "warn"];

type Profile = Schemas["ThresholdProfile"];

const BUDGET_SHARES = [
  { key: "budgetShareGood", level: "good" },
  { key: "budgetShareWarn", level: "warn" },
] as const;
type BudgetKey = (typeof BUDGET_SHARES)[number]["key"];

/** A budget share as percent, "–" when not defined. */
const percent = (v: number | null) => (v === null ? "—" : `${fmt(Math.round(v * 1000) / 10)} %`);

/**
 * Threshold profiles: per-hardware pass marks (good and warn per metric) that the heatmap colours by
 * and alert rules evaluate against. Create, edit (every field; blank clears it), delete.
 */
export async function profiles({ root, projectId }: PageContext): Promise<void> {
  const list = h("div", {});
  const alert = actionAlert();
  const form = h("form", {
    class: "panel edit-form",
    id: "profile-form",
    "aria-labelledby": "profile-form-h",
  });
  const heading = h("h2", { id: "profile-form-h" }, "New threshold profile");
  root.append(
    h("h1", {}, "Threshold profiles"),
    h("section", { class: "panel", "aria-label": "Profiles" }, alert.el, list),
    form,
  );

  let editing: Profile | null = null;
  const name = field("profile", { name: "name", label: "Name", kind: "text", required: true });
  const filters = new Map<FilterKey, FieldEl>();
  const thresholds = new Map<ThresholdKey, FieldEl>();
  const budgets = new Map<BudgetKey, FieldEl>();
  const filterFields = FILTERS.map((x) => {
    const f = field("profile", { name: x.key, label: x.label, kind: "text", placeholder: x.placeholder });
    filters.set(x.key, f.input);
    return f.wrap;
  });
  const thresholdFields = METRICS.flatMap((t) =>
    (["good", "warn"] as const).map((level) => {
      const key: ThresholdKey = t.profile[level];
      const f = field("profile", {
        name: key,
        label: `${t.label} ${level} (${t.unit})`,
        kind: "number",
        step: "any",
        min: "0",
      });
      thresholds.set(key, f.input);
      return f.wrap;
    }),
  );
  // The budget shares are 0 to 1 in the API; the form asks for percent.
  const budgetFields = BUDGET_SHARES.map((b) => {
    const f = field("profile", {
      name: b.key,
      label: `Within frame budget ${b.level} (%)`,
      kind: "number",
      step: "any",
      min: "0",
      max: "100",
    });
    budgets.set(b.key, f.input);
    return f.wrap;
  });
  const submit = h("button", { type: "submit" }, "Create profile");
  const cancel = h("button", { type: "button", hidden: true, onclick: () => reset() }, "Cancel editing");
  form.append(
    heading,
    h("div", { class: "field-grid" }, name.wrap),
    h(
      "fieldset",
      {},
      h("legend", {}, "Device filters (blank matches any)"),
      h("div", { class: "field-grid" }, filterFields),
    ),
    h(
      "fieldset",
      {},
      h("legend", {}, "Thresholds (blank: not defined). FPS passes at or above; the others at or below."),
      h("div", { class: "field-grid" }, thresholdFields),
    ),
    h(
      "fieldset",
      {},
      h(
        "legend",
        {},
        "Frame budget (blank: not defined): the share of heartbeats within one refresh of their display (60 Hz where not sent) a heatmap cell needs.",
      ),
      h("div", { class: "field-grid" }, budgetFields),
    ),
    h("p", {}, submit, " ", cancel),
  );

  function reset(): void {
    editing = null;
    form.reset();
    heading.textContent = "New threshold profile";
    submit.textContent = "Create profile";
    cancel.hidden = true;
  }

  function edit(p: Profile): void {
    editing = p;
    name.input.value = p.name;
    for (const [k, el] of filters) {
      el.value = p[k] ?? "";
    }
    for (const [k, el] of thresholds) {
      el.value = p[k] === null ? "" : String(p[k]);
    }
    for (const [k, el] of budgets) {
      const v = p[k];
      el.value = v === null ? "" : String(Math.round(v * 100_000) / 1000);
    }
    heading.textContent = `Edit “${p.name}”`;
    submit.textContent = "Save profile";
    cancel.hidden = false;
    name.input.focus();
  }

  onSubmit(form, async () => {
    const body: Schemas["ThresholdProfileCreate"] = { name: name.input.value.trim() };
    for (const [k, el] of filters) {
      body[k] = textOrNull(el);
    }
    for (const [k, el] of thresholds) {
      body[k] = numberOrNull(el);
    }
    for (const [k, el] of budgets) {
      const v = numberOrNull(el);
      body[k] = v === null ? null : v / 100;
    }
    const was = editing;
    if (was) {
      await api.PATCH("/v1/projects/{id}/threshold-profiles/{profileId}", {
        params: { path: { id: projectId, profileId: was.id } },
        body,
      });
    } else {
      await api.POST("/v1/projects/{id}/threshold-profiles", { params: { path: { id: projectId } }, body });
    }
    reset();
    await load();
    return was ? `Saved “${body.name}”.` : `Created “${body.name}”.`;
  });

  const filterText = (p: Profile) => {
    const set = FILTERS.filter((x) => p[x.key] !== null).map((x) => `${x.label}: ${p[x.key]}`);
    return set.length > 0 ? set.join(", ") : "Any device";
  };

  function load(): Promise<void> {
    alert.hide();
    return withStates(
      list,
      () => dataOf(api.GET("/v1/projects/{id}/threshold-profiles", { params: { path: { id: projectId } } })),
      (rows) => {
        list.append(
          dataTable(
            "profiles",
            [
              { label: "Name", cell: (p) => p.name },
              { label: "Devices", cell: filterText },
              ...METRICS.map((t) => ({
                label: `${t.label} good / warn (${t.unit})`,
                num: true,
                cell: (p: Profile) => `${fmt(t.good(p))} / ${fmt(t.warn(p))}`,
              })),
              {
                label: "Within frame budget good / warn",
                num: true,
                cell: (p: Profile) => `${percent(p.budgetShareGood)} / ${percent(p.budgetShareWarn)}`,
              },
              { label: "Updated", cell: (p) => when(p.updatedAt) },
              {
                label: "Actions",
                cell: (p) =>
                  h(
                    "span",
                    { class: "actions" },
                    h(
                      "button",
                      { type: "button", "aria-label": `Edit ${p.name}`, onclick: () => edit(p) },
                      "Edit",
                    ),
                    rowAction(
                      "Delete",
                      `Delete ${p.name}`,
                      async () => {
                        await api.DELETE("/v1/projects/{id}/threshold-profiles/{profileId}", {
                          params: { path: { id: projectId, profileId: p.id } },
                        });
                        if (editing?.id === p.id) {
                          reset();
                        }
                        await load();
                      },
                      alert.show,
                      `Delete the profile “${p.name}”? Alert rules that use it lose it (a rule left with none is deactivated).`,
                    ),
                  ),
              },
            ],
            rows,
          ),
        );
      },
      {
        isEmpty: (rows) => rows.length === 0,
        emptyMessage:
          "No threshold profiles yet. Create one below: the heatmap colours cells by it and alert rules evaluate it.",
      },
    );
  }

  await load();
}
