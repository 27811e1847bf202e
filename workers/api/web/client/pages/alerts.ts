import { api, dataOf, type Schemas } from "../api.js";
import { clear, fmt, h } from "../dom.js";
import { actionAlert, type FieldEl, field, onSubmit, rowAction } from "../edit-form.js";
import { evaluatedLabel } from "../evaluated.js";
import { ALERT_METRICS, type AlertMetricKey } from "../metrics.js";
import type { PageContext } from "../page.js";
import { withStates } from "../states.js";
import { dataTable, pct, when } from "../table.js";

type Rule = Schemas["AlertRuleListItem"];
type Channel = Schemas["NotificationChannel"];
type HistoryEvent = Schemas["AlertEvaluationEvent"];

const HISTORY_PAGE = 50;
const alertMetric = (k: AlertMetricKey) => ALERT_METRICS.find((m) => m.key === k);
const metricLabel = (k: AlertMetricKey) => alertMetric(k)?.label ?? k;

/** The links carry the service's public origin; on the page they stay on the origin it is served from. */
function here(link: string): string {
  const u = new URL(link, location.origin);
  return `${u.pathname}${u.search}`;
}

/** A triggered event's worst cells, each opening its panel on the heatmap, and the heatmap itself. */
function worstCells(e: HistoryEvent): HTMLElement | string {
  if (!e.links) {
    return "—";
  }
  const show = alertMetric(e.metric)?.show ?? ((v: number) => fmt(v));
  const sample = alertMetric(e.metric)?.sample ?? "sample";
  return h(
    "div",
    { class: "worst-cells" },
    e.worstCells.length
      ? h(
          "ol",
          {},
          e.worstCells.map((c) =>
            h(
              "li",
              {},
              h("a", { href: here(c.link) }, `(${c.x}, ${c.y})`),
              ` ${show(c.value)}, ${fmt(c.samples)} ${sample}${c.samples === 1 ? "" : "s"}` +
                (c.failingShare === undefined ? "" : `, ${Math.round(c.failingShare * 100)} % failing`),
            ),
          ),
        )
      : "",
    h("a", { href: here(e.links.heatmap) }, "Open heatmap"),
  );
}

/** `history` (the evaluation history's offset) is the page's URL state. */
function historyOffset(): number {
  const v = Number(new URLSearchParams(location.search).get("history") ?? "0");
  return Number.isInteger(v) && v > 0 ? v : 0;
}

function writeHistoryOffset(offset: number): void {
  const params = new URLSearchParams(location.search);
  if (offset > 0) {
    params.set("history", String(offset));
  } else {
    params.delete("history");
  }
  const qs = params.toString();
  history.replaceState(null, "", `${location.pathname}${qs ? `?${qs}` : ""}`);
}

/** What the rule form chooses from: the project's maps, profiles and channels. */
type Choices = { maps: Schemas["Map"][]; profiles: Schemas["ThresholdProfile"][]; channels: Channel[] };

const checkedIn = (box: HTMLElement) =>
  [...box.querySelectorAll<HTMLInputElement>("input[type=checkbox]:checked")].map((i) => i.value);

function setValue(el: FieldEl, v: string) {
  el.value = v;
}

function checkboxes(
  box: HTMLElement,
  group: string,
  items: { id: string; name: string }[],
  checked: string[],
) {
  clear(
    box,
    ...(items.length === 0
      ? [
          h(
            "p",
            { class: "muted" },
            group === "profile" ? "No threshold profiles yet (Profiles)." : "No channels yet (below).",
          ),
        ]
      : items.map((it) =>
          h(
            "label",
            { class: "check" },
            h("input", { type: "checkbox", name: group, value: it.id, checked: checked.includes(it.id) }),
            it.name,
          ),
        )),
  );
}

/**
 * The rule form: create a rule, or edit the one `edit` loaded. `saved` runs after a create or a save
 * (the list reloads); `fill` refreshes its choices when they change.
 */
function ruleEditor(projectId: string, choices: Choices, saved: () => Promise<void>) {
  const form = h("form", { class: "panel edit-form", id: "rule-form", "aria-labelledby": "rule-form-h" });
  let editing: Rule | null = null;
  const rf = {
    name: field("rule", {
      name: "name",
      label: "Name",
      kind: "text",
      required: true,
      placeholder: "Harbor FPS",
    }),
    mapId: field("rule", { name: "mapId", label: "Map", kind: "select", options: [], required: true }),
    metric: field("rule", {
      name: "metric",
      label: "Metric",
      kind: "select",
      options: ALERT_METRICS.map((m) => ({ value: m.key, label: `${m.label} (${m.unit})` })),
    }),
    thresholdLevel: field("rule", {
      name: "thresholdLevel",
      label: "A cell fails when it misses the",
      kind: "select",
      options: [
        { value: "warn", label: "warn threshold (bad cells)" },
        { value: "good", label: "good threshold (warn and bad cells)" },
      ],
    }),
    failPercentage: field("rule", {
      name: "failPercentage",
      label: "Trigger above (% of cells failing)",
      kind: "number",
      step: "any",
      min: "0",
      max: "100",
      required: true,
    }),
    evaluationDays: field("rule", {
      name: "evaluationDays",
      label: "Evaluation period (days)",
      kind: "number",
      step: "1",
      min: "1",
      max: "30",
      required: true,
    }),
    cellSize: field("rule", {
      name: "cellSize",
      label: "Cell size",
      kind: "select",
      options: ["5", "10", "25", "50"].map((v) => ({ value: v, label: `${v} units` })),
    }),
    cooldownMinutes: field("rule", {
      name: "cooldownMinutes",
      label: "Cooldown (minutes between notifications)",
      kind: "number",
      step: "1",
      min: "0",
      required: true,
    }),
  };
  const ruleDefaults = { failPercentage: "20", evaluationDays: "1", cellSize: "10", cooldownMinutes: "60" };
  const profileBoxes = h("div", { class: "checks" });
  const channelBoxes = h("div", { class: "checks" });
  const ruleHeading = h("h2", { id: "rule-form-h" }, "New rule");
  const ruleSubmit = h("button", { type: "submit" }, "Create rule");
  const ruleCancel = h("button", { type: "button", hidden: true, onclick: () => reset() }, "Cancel editing");
  const ruleHint = h("p", { class: "muted" });
  form.append(
    ruleHeading,
    ruleHint,
    h(
      "div",
      { class: "field-grid" },
      Object.values(rf).map((x) => x.wrap),
    ),
    h(
      "fieldset",
      {},
      h("legend", {}, "Threshold profiles (each evaluated on its own; the first is primary)"),
      profileBoxes,
    ),
    h("fieldset", {}, h("legend", {}, "Notify"), channelBoxes),
    h("p", {}, ruleSubmit, " ", ruleCancel),
  );

  function fill(): void {
    const { maps, profiles, channels } = choices;
    const sel = rf.mapId.input;
    const current = sel.value;
    clear(sel, ...maps.map((m) => h("option", { value: m.id }, `${m.name} (${m.mapId})`)));
    if (maps.some((m) => m.id === current)) {
      sel.value = current;
    }
    checkboxes(profileBoxes, "profile", profiles, editing?.thresholdProfileIds ?? checkedIn(profileBoxes));
    checkboxes(channelBoxes, "channel", channels, editing?.channelIds ?? checkedIn(channelBoxes));
    ruleHint.textContent =
      maps.length === 0 || profiles.length === 0
        ? "A rule watches one map against threshold profiles: upload a map (Maps) and create a profile (Profiles) first."
        : "";
  }

  function reset(): void {
    editing = null;
    form.reset();
    for (const [k, v] of Object.entries(ruleDefaults)) {
      setValue(rf[k as keyof typeof ruleDefaults].input, v);
    }
    ruleHeading.textContent = "New rule";
    ruleSubmit.textContent = "Create rule";
    ruleCancel.hidden = true;
    fill();
  }

  function edit(r: Rule): void {
    editing = r;
    setValue(rf.name.input, r.name);
    setValue(rf.mapId.input, r.mapId);
    setValue(rf.metric.input, r.metric);
    setValue(rf.thresholdLevel.input, r.thresholdLevel);
    setValue(rf.failPercentage.input, String(r.failPercentage));
    setValue(rf.evaluationDays.input, String(r.evaluationDays));
    setValue(rf.cellSize.input, String(r.cellSize));
    setValue(rf.cooldownMinutes.input, String(r.cooldownMinutes));
    fill();
    ruleHeading.textContent = `Edit “${r.name}”`;
    ruleSubmit.textContent = "Save rule";
    ruleCancel.hidden = false;
    rf.name.input.focus();
  }

  onSubmit(form, async () => {
    // A blank number goes as null, which the API refuses naming the field (the browser's required
    // check usually stops it first).
    const num = (el: FieldEl) => (el.value.trim() === "" ? null : Number(el.value)) as number;
    const body: Schemas["CreateAlertRule"] = {
      name: rf.name.input.value.trim(),
      mapId: rf.mapId.input.value,
      // The selects offer only the API's values.
      metric: rf.metric.input.value as Schemas["CreateAlertRule"]["metric"],
      thresholdLevel: rf.thresholdLevel.input.value as Schemas["CreateAlertRule"]["thresholdLevel"],
      failPercentage: num(rf.failPercentage.input),
      evaluationDays: num(rf.evaluationDays.input),
      cellSize: num(rf.cellSize.input),
      cooldownMinutes: num(rf.cooldownMinutes.input),
      thresholdProfileIds: checkedIn(profileBoxes),
      channelIds: checkedIn(channelBoxes),
    };
    const was = editing;
    if (was) {
      await api.PATCH("/v1/projects/{id}/alerts/{alertId}", {
        params: { path: { id: projectId, alertId: was.id } },
        body,
      });
    } else {
      await api.POST("/v1/projects/{id}/alerts", { params: { path: { id: projectId } }, body });
    }
    reset();
    await saved();
    return was ? `Saved “${body.name}”.` : `Created “${body.name}”.`;
  });

  return { form, fill, reset, edit };
}

/** The rules with their latest status; each row edits (in the rule form), deactivates or reactivates. */
function rulesTable(projectId: string, choices: Choices, edit: (r: Rule) => void) {
  const list = h("div", {});
  const alert = actionAlert();
  const section = h(
    "section",
    { class: "panel", "aria-labelledby": "rules-h" },
    h("h2", { id: "rules-h" }, "Rules"),
    alert.el,
    list,
  );
  const channelName = (id: string) => choices.channels.find((c) => c.id === id)?.name ?? "(deleted)";

  function load(): Promise<void> {
    alert.hide();
    return withStates(
      list,
      () => dataOf(api.GET("/v1/projects/{id}/alerts", { params: { path: { id: projectId } } })),
      (rules) => {
        list.append(
          dataTable(
            "rules",
            [
              { label: "Name", cell: (r) => r.name },
              { label: "Map", cell: (r) => r.mapName },
              { label: "Metric", cell: (r) => metricLabel(r.metric) },
              { label: "Fails at", cell: (r) => `misses ${r.thresholdLevel}` },
              { label: "Trigger above", num: true, cell: (r) => `${fmt(r.failPercentage)} %` },
              { label: "Period", num: true, cell: (r) => `${r.evaluationDays} d` },
              { label: "Cell", num: true, cell: (r) => String(r.cellSize) },
              { label: "Cooldown", num: true, cell: (r) => `${r.cooldownMinutes} min` },
              { label: "Profiles", cell: (r) => r.thresholdProfileNames.join(", ") || "—" },
              { label: "Notify", cell: (r) => r.channelIds.map(channelName).join(", ") || "—" },
              { label: "State", cell: (r) => (r.isActive ? "Active" : "Inactive") },
              {
                label: "Last status",
                cell: (r) =>
                  r.lastStatus
                    ? h(
                        "span",
                        { class: r.lastStatus === "triggered" ? "regression" : "improvement" },
                        `${r.lastStatus === "triggered" ? "Triggered" : "Resolved"} ${when(r.lastStatusAt)}`,
                      )
                    : "Not evaluated yet",
              },
              {
                label: "Evaluated",
                cell: (r) => {
                  const e = evaluatedLabel(r, Date.now());
                  const failed = r.lastEvaluations.find((x) => x.error)?.error;
                  return h(
                    "span",
                    {
                      class: e.flag ? "regression" : "",
                      title: failed ?? (r.lastEvaluatedAt ? when(r.lastEvaluatedAt) : ""),
                    },
                    e.text,
                  );
                },
              },
              {
                label: "Actions",
                cell: (r) =>
                  h(
                    "span",
                    { class: "actions" },
                    h(
                      "button",
                      { type: "button", "aria-label": `Edit ${r.name}`, onclick: () => edit(r) },
                      "Edit",
                    ),
                    r.isActive
                      ? rowAction(
                          "Deactivate",
                          `Deactivate ${r.name}`,
                          async () => {
                            await api.DELETE("/v1/projects/{id}/alerts/{alertId}", {
                              params: { path: { id: projectId, alertId: r.id } },
                            });
                            await load();
                          },
                          alert.show,
                          `Deactivate “${r.name}”? It keeps its history and can be reactivated.`,
                        )
                      : rowAction(
                          "Reactivate",
                          `Reactivate ${r.name}`,
                          async () => {
                            await api.PATCH("/v1/projects/{id}/alerts/{alertId}", {
                              params: { path: { id: projectId, alertId: r.id } },
                              body: { isActive: true },
                            });
                            await load();
                          },
                          alert.show,
                        ),
                  ),
              },
            ],
            rules,
          ),
        );
      },
      { isEmpty: (rules) => rules.length === 0, emptyMessage: "No alert rules yet. Create one below." },
    );
  }

  return { section, alert, load };
}

/** The evaluation history: every status change, newest first, a page at a time (`history` in the URL). */
function evaluationHistory(projectId: string) {
  const historyList = h("div", {});
  const section = h(
    "section",
    { class: "panel", "aria-labelledby": "history-h" },
    h("h2", { id: "history-h" }, "Evaluation history"),
    historyList,
  );

  function loadHistory(): Promise<void> {
    const offset = historyOffset();
    return withStates(
      historyList,
      () =>
        dataOf(
          api.GET("/v1/projects/{id}/alerts/history", {
            params: { path: { id: projectId }, query: { limit: HISTORY_PAGE, offset } },
          }),
        ),
      (events) => {
        const pager = h(
          "p",
          { class: "pager" },
          h(
            "button",
            {
              type: "button",
              disabled: offset === 0,
              onclick: () => {
                writeHistoryOffset(Math.max(0, offset - HISTORY_PAGE));
                void loadHistory();
              },
            },
            "Newer",
          ),
          " ",
          h(
            "button",
            {
              type: "button",
              disabled: events.length < HISTORY_PAGE,
              onclick: () => {
                writeHistoryOffset(offset + HISTORY_PAGE);
                void loadHistory();
              },
            },
            "Older",
          ),
        );
        historyList.append(
          dataTable(
            "history",
            [
              { label: "When", cell: (e) => when(e.createdAt) },
              { label: "Rule", cell: (e) => e.ruleName },
              {
                label: "Profile",
                cell: (e) =>
                  e.thresholdProfileDeleted ? "(deleted profile)" : (e.thresholdProfileName ?? "—"),
              },
              { label: "Metric", cell: (e) => metricLabel(e.metric) },
              {
                label: "Status",
                cell: (e) =>
                  h(
                    "span",
                    { class: e.status === "triggered" ? "regression" : "improvement" },
                    e.status === "triggered" ? "Triggered" : "Resolved",
                  ),
              },
              {
                label: "Failing cells",
                num: true,
                cell: (e) => `${fmt(e.failCount)} of ${fmt(e.totalCount)}`,
              },
              { label: "Failing", num: true, cell: (e) => pct(e.failPercentage) },
              { label: "Notified", cell: (e) => (e.notified ? "Yes" : "No") },
              { label: "Worst cells", cell: worstCells },
            ],
            events,
          ),
          pager,
        );
      },
      {
        isEmpty: (events) => events.length === 0 && offset === 0,
        emptyMessage: "No evaluations recorded yet: an event appears whenever a rule's status changes.",
      },
    );
  }

  return { section, load: loadHistory };
}

/**
 * The notification channels: the list (delete), and the form that creates one, showing a webhook's
 * signing secret once. `changed` runs after a create or a delete (the choices and the rules reload).
 */
function channelEditor(projectId: string, changed: (what: "created" | "deleted") => Promise<void>) {
  const channelsList = h("div", {});
  const alert = actionAlert();
  const section = h(
    "section",
    { class: "panel", "aria-labelledby": "channels-h" },
    h("h2", { id: "channels-h" }, "Notification channels"),
    alert.el,
    channelsList,
  );
  const channelForm = h("form", {
    class: "panel edit-form",
    id: "channel-form",
    "aria-labelledby": "channel-form-h",
  });
  const secret = h("div", { role: "status" });
  const cf = {
    kind: field("channel", {
      name: "kind",
      label: "Kind",
      kind: "select",
      options: [
        { value: "webhook", label: "Webhook (signed JSON POST)" },
        { value: "slack", label: "Slack incoming webhook" },
      ],
    }),
    name: field("channel", {
      name: "name",
      label: "Name",
      kind: "text",
      required: true,
      placeholder: "QA on-call",
    }),
    url: field("channel", {
      name: "url",
      label: "URL",
      kind: "url",
      required: true,
      placeholder: "https://…",
    }),
  };
  channelForm.append(
    h("h2", { id: "channel-form-h" }, "New channel"),
    h(
      "div",
      { class: "field-grid" },
      Object.values(cf).map((x) => x.wrap),
    ),
    h("p", {}, h("button", { type: "submit" }, "Create channel")),
  );
  onSubmit(channelForm, async () => {
    const created = await dataOf(
      api.POST("/v1/projects/{id}/channels", {
        params: { path: { id: projectId } },
        body: {
          // The select offers only the API's kinds.
          kind: cf.kind.input.value as Schemas["CreateNotificationChannel"]["kind"],
          name: cf.name.input.value.trim(),
          url: cf.url.input.value.trim(),
        },
      }),
    );
    channelForm.reset();
    // The webhook's signing secret exists in this answer only: shown once, to copy now.
    clear(
      secret,
      ...(created.signingSecret
        ? [
            h(
              "div",
              { class: "notice", "data-secret": created.id },
              h("p", {}, `Signing secret of “${created.name}”: copy it now, it is not shown again.`),
              h("input", {
                class: "secret",
                readonly: true,
                value: created.signingSecret,
                "aria-label": "Signing secret",
              }),
            ),
          ]
        : []),
    );
    await changed("created");
    return `Created “${created.name}”.`;
  });

  function load(): Promise<void> {
    alert.hide();
    return withStates(
      channelsList,
      () => dataOf(api.GET("/v1/projects/{id}/channels", { params: { path: { id: projectId } } })),
      (rows) => {
        channelsList.append(
          dataTable(
            "channels",
            [
              { label: "Name", cell: (c) => c.name },
              { label: "Kind", cell: (c) => (c.kind === "slack" ? "Slack" : "Webhook") },
              { label: "URL", cell: (c) => h("code", {}, c.url) },
              { label: "Created", cell: (c) => when(c.createdAt) },
              {
                label: "Actions",
                cell: (c) =>
                  rowAction(
                    "Delete",
                    `Delete ${c.name}`,
                    async () => {
                      await api.DELETE("/v1/projects/{id}/channels/{channelId}", {
                        params: { path: { id: projectId, channelId: c.id } },
                      });
                      await changed("deleted");
                    },
                    alert.show,
                    `Delete the channel “${c.name}”? Rules stop notifying it.`,
                  ),
              },
            ],
            rows,
          ),
        );
      },
      {
        isEmpty: (rows) => rows.length === 0,
        emptyMessage: "No channels yet: rules record their status without notifying anyone.",
      },
    );
  }

  return { section, form: channelForm, secret, load };
}

/**
 * Alerting for a QA lead: the rules (create, edit, deactivate, reactivate) with their latest status,
 * the evaluation history (every status change, newest first) and the notification channels (list,
 * create with the webhook's signing secret shown once, delete). A rule needs a map and a threshold
 * profile that defines its metric at its level; the API says so when one does not.
 */
export async function alerts({ root, projectId }: PageContext): Promise<void> {
  const choices: Choices = { maps: [], profiles: [], channels: [] };
  const editor = ruleEditor(projectId, choices, () => rules.load());
  const rules = rulesTable(projectId, choices, editor.edit);
  const history = evaluationHistory(projectId);
  const channels = channelEditor(projectId, async (what) => {
    await loadChoices();
    await (what === "created" ? channels.load() : Promise.all([channels.load(), rules.load()]));
  });
  root.append(
    h("h1", {}, "Alerts"),
    rules.section,
    editor.form,
    history.section,
    channels.section,
    channels.form,
    channels.secret,
  );

  async function loadChoices(): Promise<void> {
    const [m, p, c] = await Promise.all([
      dataOf(api.GET("/v1/projects/{id}/maps", { params: { path: { id: projectId } } })),
      dataOf(api.GET("/v1/projects/{id}/threshold-profiles", { params: { path: { id: projectId } } })),
      dataOf(api.GET("/v1/projects/{id}/channels", { params: { path: { id: projectId } } })),
    ]);
    choices.maps = m;
    choices.profiles = p;
    choices.channels = c;
    editor.fill();
  }

  // The form gets its defaults before the choices arrive, so what a person types meanwhile is kept
  // (loading the choices fills the selects and boxes and keeps their values; it resets nothing).
  editor.reset();
  try {
    await loadChoices();
  } catch (err) {
    rules.alert.show(err);
  }
  await Promise.all([rules.load(), history.load(), channels.load()]);
}
