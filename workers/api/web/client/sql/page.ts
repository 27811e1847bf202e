import type { Schemas } from "../api.js";
import { clear, fmt, h } from "../dom.js";
import type { PageContext } from "../page.js";
import { dataTable } from "../table.js";
import { type SqlEditor, sqlEditor } from "./editor.js";
import type { SqlKit } from "./kit.js";
import { forgetRecent, type Recent, readRecent, remember } from "./recent.js";

// The SQL explorer (docs/dashboard.md, "SQL"): the entry of the SQL page's own bundle, loaded by
// client/pages/sql.ts. Every query goes to POST /api/v1/query with the session, as any client's does:
// the endpoint's allow-list, project isolation and limits apply unchanged, and a member (no data:admin)
// is refused there as on the page's shell.

type Result = Schemas["QueryResult"];

const EXAMPLE =
  "SELECT event_name, count() AS events\nFROM events\nGROUP BY event_name\nORDER BY events DESC";

/** The 1-based position ClickHouse's parser names ("failed at position 17"), in the user's text. */
export function positionOf(detail: string): number | null {
  const m = /\bposition (\d+)\b/.exec(detail);
  return m ? Number(m[1]) : null;
}

const NUMERIC = /^(Nullable\()?(U?Int\d+|Float\d+|Decimal)/;
const DATE = /^(Nullable\()?Date(32)?\)?$/;

/** Answer values as text: NULL as NULL, arrays, maps and tuples as JSON. */
function text(v: unknown): string {
  if (v === null || v === undefined) {
    return "NULL";
  }
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

export async function sqlPage({ root, projectId }: PageContext, kit: SqlKit): Promise<void> {
  const params = new URLSearchParams(location.search);
  const recentList = h("ul", { class: "sql-recent" });
  const forget = h(
    "button",
    {
      type: "button",
      onclick: () => {
        forgetRecent(projectId);
        showRecent();
      },
    },
    "Forget recent queries",
  );
  const summary = h("p", { class: "sql-summary", role: "status", "aria-live": "polite" });
  // Hidden until the first run: an empty panel says nothing.
  const results = h("section", { class: "panel", "aria-label": "Results", hidden: true });
  const editorBox = h("div", { class: "sql-editor" });
  const label = h("p", { id: "sql-label", class: "sql-label" }, "Query");
  const runButton = h("button", { type: "submit" }, "Run");
  const form = h(
    "form",
    { class: "panel", "aria-label": "Query" },
    label,
    editorBox,
    h(
      "p",
      { class: "hint", id: "sql-hint" },
      "One SELECT over ",
      h("code", {}, "events"),
      ", this project's rows (WITH, UNION ALL and ClickHouse's functions allowed). Ctrl+Enter (⌘+Enter on a Mac) runs it; the address bar then holds the query, a link anyone in the studio can open.",
    ),
    runButton,
  );
  root.append(
    h("h1", {}, "SQL"),
    form,
    summary,
    results,
    h(
      "section",
      { class: "panel", "aria-label": "Recent queries" },
      h("h2", {}, "Recent queries"),
      recentList,
      forget,
    ),
  );

  const editor: SqlEditor = sqlEditor(editorBox, {
    doc: params.get("q") ?? readRecent(projectId)[0]?.sql ?? EXAMPLE,
    labelledBy: "sql-label",
    describedBy: "sql-hint",
    onRun: () => void run(),
  });
  label.addEventListener("click", () => editor.focus());
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void run();
  });
  showRecent();
  void loadColumns();

  let generation = 0;
  async function run(): Promise<void> {
    const raw = editor.value();
    const sql = raw.trim();
    // The endpoint trims the text too: its positions count from the first non-blank character.
    const lead = raw.length - raw.trimStart().length;
    if (!sql) {
      results.hidden = false;
      clear(results, h("p", { class: "state error", role: "alert" }, "Write a query first."));
      return;
    }
    const gen = ++generation;
    results.hidden = false;
    editor.clearError();
    const url = new URL(location.href);
    url.searchParams.set("q", sql);
    history.replaceState(null, "", url.pathname + url.search);
    remember(projectId, sql);
    showRecent();
    runButton.disabled = true;
    results.setAttribute("aria-busy", "true");
    clear(summary, document.createTextNode("Running…"));
    clear(results);
    try {
      const answer = await kit.dataOf(
        kit.api.POST("/v1/query", { body: { project_id: projectId, sql, limit: 1000 } }),
      );
      if (gen === generation) {
        show(answer);
      }
    } catch (err) {
      if (gen === generation) {
        showError(err, lead);
      }
    } finally {
      if (gen === generation) {
        runButton.disabled = false;
        results.removeAttribute("aria-busy");
      }
    }
  }

  function show(answer: Result): void {
    const rows = answer.rowCount === 1 ? "1 row" : `${fmt(answer.rowCount)} rows`;
    clear(
      summary,
      document.createTextNode(
        `${rows}${answer.truncated ? " (the first 1,000; there are more)" : ""} · ${fmt(answer.rows_read)} rows read · ${fmt(answer.elapsed_ms)} ms`,
      ),
    );
    if (answer.rowCount === 0) {
      results.append(h("p", { class: "state empty", role: "status" }, "The query returned no rows."));
      return;
    }
    chart(answer);
    const wrap = h("div", { class: "sql-table" });
    wrap.append(
      dataTable(
        "results",
        answer.columns.map((c) => ({
          label: c.name,
          num: NUMERIC.test(c.type),
          cell: (r: Record<string, unknown>) => text(r[c.name]),
        })),
        answer.rows,
      ),
    );
    results.append(wrap);
  }

  /** A two-column answer whose second column is a number: a line over dates, else bars. */
  function chart(answer: Result): void {
    const [x, y] = answer.columns;
    if (answer.columns.length !== 2 || !x || !y || !NUMERIC.test(y.type)) {
      return;
    }
    const values = answer.rows.map((r) => Number(r[y.name]));
    const keys = answer.rows.map((r) => text(r[x.name]));
    if (values.some((v) => !Number.isFinite(v))) {
      return;
    }
    const title = `${y.name} by ${x.name}`;
    const box = h("figure", { class: "sql-chart", "aria-label": "Chart" }, h("figcaption", {}, title));
    results.append(box);
    if (DATE.test(x.type)) {
      const order = keys.map((k, i) => [k, values[i] ?? 0] as const).sort((a, b) => a[0].localeCompare(b[0]));
      kit.timeChart(box, {
        title,
        dates: order.map((o) => o[0]),
        series: [{ label: y.name, values: order.map((o) => o[1]) }],
      });
    } else {
      kit.barChart(box, { title, labels: keys, values });
    }
  }

  function showError(err: unknown, lead: number): void {
    clear(summary);
    const detail =
      err instanceof kit.ApiProblem
        ? err.detail
        : err instanceof Error
          ? err.message
          : "Something went wrong.";
    const position = positionOf(detail);
    const at = position === null ? null : editor.markError(position + lead);
    results.append(
      h(
        "div",
        { class: "state error", role: "alert" },
        at ? h("p", { class: "sql-error-at" }, `Line ${at.line}, column ${at.column}`) : null,
        h("p", {}, detail),
      ),
    );
  }

  /** The view's columns and their types, asked of the endpoint itself: what a query can name. */
  async function loadColumns(): Promise<void> {
    try {
      const answer = await kit.dataOf(
        kit.api.POST("/v1/query", {
          body: { project_id: projectId, sql: "SELECT * FROM events LIMIT 0", limit: 1 },
        }),
      );
      editor.setColumns(answer.columns);
      // Completions name the view's columns from now on (browser tests wait for this, not for time).
      editorBox.dataset.columns = "loaded";
    } catch {
      // Completions without columns: the query itself will say what is wrong.
      editorBox.dataset.columns = "failed";
    }
  }

  function showRecent(): void {
    const recent = readRecent(projectId);
    forget.hidden = recent.length === 0;
    if (recent.length === 0) {
      clear(recentList, h("li", { class: "hint" }, "Queries you run are kept here, on this device only."));
      return;
    }
    clear(
      recentList,
      ...recent.map((r: Recent) =>
        h(
          "li",
          {},
          h(
            "button",
            {
              type: "button",
              class: "sql-recent-query",
              title: r.sql,
              onclick: () => {
                editor.set(r.sql);
                void run();
              },
            },
            r.sql.length > 140 ? `${r.sql.slice(0, 139)}…` : r.sql,
          ),
          " ",
          h("small", {}, `${new Date(r.at).toISOString().slice(0, 16).replace("T", " ")} UTC`),
        ),
      ),
    );
  }

  if (params.get("q")) {
    await run();
  } else {
    editor.focus();
  }
}
