import { api, dataOf, type Schemas } from "../api.js";
import { clear, fmt, h } from "../dom.js";
import { field, onSubmit } from "../edit-form.js";
import { bytes, every, firstLoad, progressBar } from "../jobs.js";
import type { PageContext } from "../page.js";
import { failed } from "../states.js";
import { dataTable, when } from "../table.js";

type Export = Schemas["Export"];
type ExportRequest = Schemas["ExportRequest"];

const WINDOWS = [
  { value: "1", label: "Today" },
  { value: "7", label: "Last 7 days" },
  { value: "30", label: "Last 30 days" },
  { value: "90", label: "Last 90 days" },
  { value: "range", label: "From … to … (UTC dates)" },
];

/**
 * Data exports: start one (format, window, event name as POST …/exports takes them), then the list
 * (GET …/exports) with each export's progress (rows written of the rows counted when it started), its
 * status, a download link once completed, and why a failed one failed with a Retry that starts the same
 * export again. The list is read again every second while an export is queued or running.
 */
export async function exports({ root, projectId }: PageContext): Promise<void> {
  const list = h("div", {});
  const form = h("form", { class: "panel edit-form", id: "export-form", "aria-labelledby": "export-form-h" });
  root.append(
    h("h1", {}, "Exports"),
    h(
      "p",
      { class: "muted" },
      "The project's events as a file, with the columns of the SQL query's events view, ordered by time.",
    ),
    form,
    h(
      "section",
      { class: "panel", "aria-labelledby": "exports-h" },
      h("h2", { id: "exports-h" }, "Exports"),
      list,
    ),
  );

  const f = {
    format: field("export", {
      name: "format",
      label: "Format",
      kind: "select",
      options: [
        { value: "csv", label: "CSV (with a header row)" },
        { value: "ndjson", label: "NDJSON (one JSON object a line)" },
        { value: "parquet", label: "Parquet" },
      ],
    }),
    window: field("export", { name: "window", label: "Window", kind: "select", options: WINDOWS }),
    from: field("export", {
      name: "from",
      label: "From (UTC date)",
      kind: "text",
      placeholder: "2026-01-01",
    }),
    to: field("export", {
      name: "to",
      label: "To (UTC date, exclusive)",
      kind: "text",
      placeholder: "2026-02-01",
    }),
    eventName: field("export", {
      name: "eventName",
      label: "Event name",
      kind: "text",
      placeholder: "all events",
      hint: "Optional: only events of this name.",
    }),
  };
  f.from.input.setAttribute("type", "date");
  f.to.input.setAttribute("type", "date");
  const showRange = () => {
    const range = f.window.input.value === "range";
    f.from.wrap.hidden = !range;
    f.to.wrap.hidden = !range;
  };
  f.window.input.value = "7";
  f.window.input.addEventListener("change", showRange);
  showRange();
  form.append(
    h("h2", { id: "export-form-h" }, "Start an export"),
    h(
      "div",
      { class: "field-grid" },
      Object.values(f).map((x) => x.wrap),
    ),
    h("p", {}, h("button", { type: "submit" }, "Start export")),
  );

  const start = async (body: ExportRequest) => {
    const created = await dataOf(
      api.POST("/v1/projects/{id}/exports", { params: { path: { id: projectId } }, body }),
    );
    await refresh();
    return created;
  };
  onSubmit(form, async () => {
    const format = f.format.input.value as ExportRequest["format"];
    const eventName = f.eventName.input.value.trim() || undefined;
    const window =
      f.window.input.value === "range"
        ? { from: isoDay(f.from.input.value), to: isoDay(f.to.input.value) }
        : { days: Number(f.window.input.value) };
    const created = await start({ format, eventName, ...window });
    return `Export started (${created.format}, ${when(created.from)} to ${when(created.to)}).`;
  });

  const retryAlert = h("p", { class: "state error", role: "alert", hidden: true });
  list.before(retryAlert);
  const retry = (e: Export) => async () => {
    retryAlert.hidden = true;
    try {
      await start({ format: e.format, from: e.from, to: e.to, eventName: e.eventName ?? undefined });
    } catch (err) {
      failed(retryAlert, err);
      retryAlert.hidden = false;
    }
  };

  const render = (rows: Export[]) => {
    if (rows.length === 0) {
      clear(list, h("p", { class: "state empty", role: "status" }, "No exports yet. Start one above."));
      return;
    }
    clear(
      list,
      dataTable(
        "exports",
        [
          {
            label: "Started",
            cell: (e) => twoLines(when(e.createdAt).slice(0, 10), when(e.createdAt).slice(11)),
          },
          { label: "Format", cell: (e) => e.format },
          { label: "Window", cell: (e) => twoLines(`${day(e.from)} –`, day(e.to)) },
          { label: "Event", cell: (e) => e.eventName ?? "all" },
          {
            label: "Status",
            cell: (e) =>
              h(
                "span",
                { "data-status": e.status },
                STATUS[e.status],
                e.status === "failed" ? " " : null,
                e.status === "failed"
                  ? h(
                      "small",
                      { class: "export-error", style: "display:block" },
                      e.error ?? "no reason recorded",
                    )
                  : null,
              ),
          },
          { label: "Progress", cell: progressOf },
          {
            label: "Size",
            num: true,
            cell: (e) =>
              bytes(e.status === "completed" ? e.sizeBytes : e.status === "running" ? e.bytesWritten : null),
          },
          { label: "File", cell: (e) => fileCell(e, retry(e)) },
        ],
        rows,
      ),
    );
  };
  let latest: Export[] = [];
  const refresh = async () => {
    latest = await dataOf(api.GET("/v1/projects/{id}/exports", { params: { path: { id: projectId } } }));
    render(latest);
  };
  const first = await firstLoad(list, "Exports", () =>
    dataOf(api.GET("/v1/projects/{id}/exports", { params: { path: { id: projectId } } })),
  );
  if (first === null) {
    form.remove();
    return;
  }
  latest = first;
  render(latest);
  every(1000, async () => {
    if (latest.some((e) => e.status === "queued" || e.status === "running")) {
      await refresh();
    }
    return false;
  });
}

const STATUS: Record<Export["status"], string> = {
  queued: "Queued",
  running: "Running",
  completed: "Completed",
  failed: "Failed",
};

/** Two short lines in one cell (a narrower table than one long unwrapped line). */
function twoLines(first: string, second: string): Node {
  return h("span", {}, first, " ", h("br", {}), second);
}

/** An instant as its UTC date when it is midnight (windows are whole days), else to the minute. */
function day(iso: string): string {
  return iso.slice(11, 23) === "00:00:00.000" ? iso.slice(0, 10) : when(iso);
}

function isoDay(day: string): string | undefined {
  return /^\d{4}-\d{2}-\d{2}$/.test(day) ? `${day}T00:00:00.000Z` : undefined;
}

/** Rows written of the rows counted at the start; Parquet shows its bytes (its rows are not visible). */
function progressOf(e: Export): Node {
  if (e.status === "completed") {
    return progressBar(`Export ${e.id} progress`, 1, 1, `${fmt(e.rowCount)} rows`);
  }
  if (e.status === "failed") {
    return h("span", {}, "—");
  }
  if (e.status === "queued" || e.rowsExpected === null) {
    return progressBar(
      `Export ${e.id} progress`,
      null,
      null,
      e.status === "queued" ? "Waiting" : "Counting rows…",
    );
  }
  if (e.rowsWritten === null) {
    return progressBar(
      `Export ${e.id} progress`,
      null,
      null,
      `${bytes(e.bytesWritten)} of ~${fmt(e.rowsExpected)} rows`,
    );
  }
  return progressBar(
    `Export ${e.id} progress`,
    e.rowsWritten,
    Math.max(e.rowsExpected, 1),
    `${fmt(e.rowsWritten)} of ${fmt(e.rowsExpected)} rows`,
  );
}

function fileCell(e: Export, retry: () => Promise<void>): Node {
  if (e.status === "completed" && e.downloadUrl) {
    return h("a", { href: e.downloadUrl, download: "" }, `Download ${e.format}`);
  }
  if (e.status === "failed") {
    const button = h("button", { type: "button", "aria-label": `Retry export ${e.id}` }, "Retry");
    button.addEventListener("click", () => {
      button.disabled = true;
      void retry().finally(() => {
        button.disabled = false;
      });
    });
    return button;
  }
  return h("span", { class: "muted" }, "Not ready");
}
