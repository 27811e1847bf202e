import { api, dataOf, type Schemas } from "../api.js";
import { clear, fmt, h } from "../dom.js";
import { field, onSubmit } from "../edit-form.js";
import { count, every, firstLoad, progressBar } from "../jobs.js";
import type { PageContext } from "../page.js";
import { failed } from "../states.js";
import { dataTable, when } from "../table.js";

type Erasure = Schemas["Erasure"];
type Preview = Schemas["ErasurePreview"];

/**
 * Player erasure, for the studio's owners (data:admin): the player id, then a confirmation naming what
 * will go (POST …/erasures/preview: the player's rows per table, and the rollups rebuilt for their
 * days), then the erasure (POST …/erasures, answered at once: it runs on the erasures queue) followed on
 * its status panel: queued until the queue's consumer takes it, each table's rows removed as the steps
 * finish (GET …/erasures/{erasureId}, read again while it runs), and the result.
 * The status panel is the URL (`?erasure=<id>`); the studio's history of erasures is listed below it.
 */
export async function erasure({ root, projectId }: PageContext): Promise<void> {
  const form = h("form", {
    class: "panel edit-form",
    id: "erasure-form",
    "aria-labelledby": "erasure-form-h",
  });
  const confirmBox = h("section", { class: "panel", "aria-labelledby": "erasure-confirm-h", hidden: true });
  const statusBox = h("section", { class: "panel", "aria-labelledby": "erasure-status-h", hidden: true });
  const historyList = h("div", {});
  root.append(
    h("h1", {}, "Player erasure"),
    h(
      "p",
      { class: "muted" },
      "Removes every event of one player and every row derived from them, for a deletion request. " +
        "Only the SHA-256 of the player id is kept, in the history below.",
    ),
    form,
    confirmBox,
    statusBox,
    h(
      "section",
      { class: "panel", "aria-labelledby": "erasure-history-h" },
      h("h2", { id: "erasure-history-h" }, "History"),
      historyList,
    ),
  );

  const player = field("erasure", {
    name: "playerId",
    label: "Player ID",
    kind: "text",
    required: true,
    hint: "The player_id the game sends, or the session id of a player without one.",
  });
  form.append(
    h("h2", { id: "erasure-form-h" }, "Erase a player"),
    h("div", { class: "field-grid" }, player.wrap),
    h("p", {}, h("button", { type: "submit" }, "Review erasure")),
  );

  let erasures: Erasure[] = [];
  const loadHistory = async () => {
    erasures = await dataOf(api.GET("/v1/projects/{id}/erasures", { params: { path: { id: projectId } } }));
    renderHistory();
  };
  const renderHistory = () => {
    if (erasures.length === 0) {
      clear(
        historyList,
        h("p", { class: "state empty", role: "status" }, "No player has been erased in this project."),
      );
      return;
    }
    clear(
      historyList,
      dataTable(
        "erasures",
        [
          { label: "Requested", cell: (e) => when(e.createdAt) },
          {
            label: "Player (SHA-256)",
            cell: (e) => h("code", { title: e.playerIdSha256 }, `${e.playerIdSha256.slice(0, 12)}…`),
          },
          { label: "Status", cell: (e) => STATUS(e) },
          { label: "Events removed", num: true, cell: (e) => fmt(e.rowsRemoved) },
          { label: "Tables", num: true, cell: (e) => fmt(e.steps.length) },
          {
            label: "Details",
            cell: (e) =>
              h(
                "a",
                {
                  href: `?erasure=${e.id}`,
                  "aria-label": `Details of the erasure of ${when(e.createdAt)}`,
                  onclick: (ev: Event) => {
                    ev.preventDefault();
                    void follow(e.id, null);
                  },
                },
                "Details",
              ),
          },
        ],
        erasures,
      ),
    );
  };

  /** Shows one erasure's status panel (and puts it in the URL), read again until it is done. */
  const follow = async (id: string, plan: Preview | null) => {
    history_(id);
    statusBox.hidden = false;
    const draw = (e: Erasure) => renderStatus(statusBox, e, plan);
    const read = () =>
      dataOf(
        api.GET("/v1/projects/{id}/erasures/{erasureId}", {
          params: { path: { id: projectId, erasureId: id } },
        }),
      );
    let current: Erasure;
    try {
      current = await read();
    } catch (err) {
      statusFailed(statusBox, err);
      return;
    }
    draw(current);
    if (current.status === "running") {
      every(500, async () => {
        current = await read();
        draw(current);
        if (current.status !== "running") {
          await loadHistory();
          return true;
        }
        return false;
      });
    }
  };

  onSubmit(form, async () => {
    const playerId = player.input.value.trim();
    const plan = await dataOf(
      api.POST("/v1/projects/{id}/erasures/preview", {
        params: { path: { id: projectId } },
        body: { playerId },
      }),
    );
    renderConfirm(
      confirmBox,
      playerId,
      plan,
      () => void erase(playerId, plan),
      () => {
        confirmBox.hidden = true;
        player.input.focus();
      },
    );
    confirmBox.hidden = false;
    confirmBox.querySelector<HTMLButtonElement>("button[data-confirm]")?.focus();
    return undefined;
  });

  /**
   * Starts the erasure and follows it: POST …/erasures with `Prefer: respond-async` answers 202 as soon
   * as the erasure is recorded (it runs on the erasures queue), and its panel is drawn from
   * GET …/erasures/{erasureId} as its steps grow: queued, running, then the result.
   */
  const erase = async (playerId: string, plan: Preview) => {
    confirmBox.hidden = true;
    form.reset();
    statusBox.hidden = false;
    clear(statusBox, h("h2", { id: "erasure-status-h" }, "Erasure"), h("p", { role: "status" }, "Starting…"));
    let started: Erasure;
    try {
      started = await dataOf(
        api.POST("/v1/projects/{id}/erasures", {
          params: { path: { id: projectId } },
          body: { playerId },
          headers: { Prefer: "respond-async" },
        }),
      );
    } catch (err) {
      statusFailed(statusBox, err);
      await loadHistory().catch(() => {});
      return;
    }
    renderStatus(statusBox, started, plan);
    await loadHistory().catch(() => {});
    await follow(started.id, plan);
  };

  const first = await firstLoad(historyList, "Player erasure", () =>
    dataOf(api.GET("/v1/projects/{id}/erasures", { params: { path: { id: projectId } } })),
  );
  if (first === null) {
    form.remove();
    return;
  }
  erasures = first;
  renderHistory();
  const opened = new URLSearchParams(location.search).get("erasure");
  if (opened) {
    await follow(opened, null);
  }
}

const STATUS_LABEL: Record<Erasure["status"], string> = {
  running: "Running",
  completed: "Done",
  failed: "Failed",
};

/** Running but not yet taken by the queue's consumer: queued. */
const STATUS = (e: Erasure): string =>
  e.status === "running" && e.startedAt === null ? "Queued" : STATUS_LABEL[e.status];

/** The status panel when the erasure could not be started or read: the API's detail. */
function statusFailed(box: HTMLElement, err: unknown): void {
  const p = h("p", {});
  clear(box, h("h2", { id: "erasure-status-h" }, "Erasure"), p);
  failed(p, err);
}

function history_(id: string): void {
  history.replaceState(null, "", `${location.pathname}?erasure=${encodeURIComponent(id)}`);
}

/** The confirmation: what will go, table by table, before anything is removed. */
function renderConfirm(
  box: HTMLElement,
  playerId: string,
  plan: Preview,
  onConfirm: () => void,
  onCancel: () => void,
): void {
  const total = plan.tables.reduce((n, t) => n + t.rows, 0);
  const events = plan.tables[0]?.rows ?? 0;
  const withRows = plan.tables.filter((t) => t.rows > 0);
  clear(
    box,
    h("h2", { id: "erasure-confirm-h" }, `Erase player “${playerId}”?`),
    events === 0
      ? h(
          "p",
          { class: "state error", role: "alert" },
          "This project holds no events of this player: nothing would be removed.",
        )
      : h(
          "p",
          {},
          `This removes ${count(total, "row")} from ${count(withRows.length, "table")}, ${fmt(events)} of them events, ` +
            `and rebuilds ${fmt(plan.rebuilt.length)} rollups for the player's ${count(plan.days, "day")}. It cannot be undone.`,
        ),
    dataTable(
      "erasure-plan",
      [
        { label: "Table", cell: (t) => h("code", {}, t.table) },
        { label: "Rows to remove", num: true, cell: (t) => fmt(t.rows) },
      ],
      plan.tables,
    ),
    h("p", { class: "muted" }, `Rebuilt without the player: ${plan.rebuilt.join(", ")}.`),
    h(
      "p",
      { class: "actions" },
      h("button", { type: "button", "data-confirm": "", onclick: onConfirm }, "Erase player"),
      h("button", { type: "button", onclick: onCancel }, "Cancel"),
    ),
  );
}

/**
 * One erasure's status: each table with the rows removed so far (pending ones, when the plan is known,
 * as "waiting"), a bar of the tables done, and the result once it is done or failed.
 */
function renderStatus(box: HTMLElement, e: Erasure, plan: Preview | null): void {
  const done = new Map(e.steps.map((s) => [s.table, s.rowsRemoved]));
  const planned = plan ? [...plan.tables.map((t) => t.table), ...plan.rebuilt] : [];
  const tables = [...new Set([...e.steps.map((s) => s.table), ...planned])];
  const rebuilt = new Set(e.rebuiltTables);
  const deleted = e.steps.filter((s) => !rebuilt.has(s.table));
  const removed = deleted.reduce((n, s) => n + s.rowsRemoved, 0);
  const result =
    e.status === "completed"
      ? h(
          "p",
          { role: "status", "data-result": "completed" },
          `Done: ${count(removed, "row")} removed from ${count(deleted.filter((s) => s.rowsRemoved > 0).length, "table")} (${count(e.rowsRemoved, "event")}); ${count(e.steps.length - deleted.length, "rollup")} rebuilt without the player.`,
        )
      : e.status === "failed"
        ? h(
            "p",
            { class: "state error", role: "alert", "data-result": "failed" },
            `Failed: ${e.error ?? "no reason recorded"}. Erase the player again to finish.`,
          )
        : e.startedAt === null
          ? h("p", { role: "status", "data-state": "queued" }, "Queued: waiting for the erasure queue…")
          : e.error
            ? h(
                "p",
                { role: "status", "data-state": "retrying" },
                `Running (attempt ${fmt(e.attempts)}; the last one stopped: ${e.error}). Retrying where it stopped…`,
              )
            : h("p", { role: "status", "data-state": "running" }, "Running…");
  clear(
    box,
    h("h2", { id: "erasure-status-h" }, `Erasure of ${when(e.createdAt)}`),
    h("p", {}, "Player SHA-256 ", h("code", {}, e.playerIdSha256)),
    progressBar(
      "Erasure progress",
      e.status === "running" ? e.steps.length : 1,
      e.status === "running" ? Math.max(tables.length, e.steps.length + 1) : 1,
      `${fmt(e.steps.length)} of ${tables.length ? fmt(tables.length) : "?"} tables done`,
    ),
    result,
    dataTable(
      "erasure-steps",
      [
        { label: "Table", cell: (t) => h("code", {}, t) },
        {
          label: "Rows removed",
          num: true,
          cell: (t) =>
            done.has(t)
              ? rebuilt.has(t)
                ? `rebuilt (${fmt(done.get(t))} replaced)`
                : fmt(done.get(t))
              : e.status === "running"
                ? "waiting"
                : "—",
        },
      ],
      tables,
    ),
  );
}
