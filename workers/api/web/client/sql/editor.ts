import { autocompletion, type Completion } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap } from "@codemirror/commands";
import { SQLDialect, sql } from "@codemirror/lang-sql";
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from "@codemirror/language";
import { Compartment, EditorState, Prec, StateEffect, StateField } from "@codemirror/state";
import {
  Decoration,
  type DecorationSet,
  drawSelection,
  EditorView,
  highlightActiveLine,
  keymap,
  lineNumbers,
  placeholder,
} from "@codemirror/view";

// The SQL page's editor: CodeMirror 6 with SQL highlighting, the `events` view's columns (with their
// ClickHouse types) offered as completions, Ctrl/Cmd-Enter to run, and the position an error names
// underlined. Only the SQL page's bundle carries it (scripts/build-client.ts).
//
// CodeMirror injects its styles at run time (style-mod: a constructed stylesheet where the browser has
// them, else a <style> element). The dashboard's CSP allows inline styles (`style-src 'self'
// 'unsafe-inline'`, workers/api/web/dashboard.ts), so no nonce (`EditorView.cspNonce`) is needed.

/**
 * ClickHouse's SQL as far as highlighting and keyword completion go: its SELECT words, its types, its
 * quoting and comments. (lang-sql's dialects each list their own words; none is ClickHouse.)
 */
const ClickHouse = SQLDialect.define({
  keywords:
    "select distinct from where prewhere group by order having limit offset fetch with as and or not in is null like ilike between case when then else end join inner left right full outer cross semi anti asof array on using union all except intersect any some exists global partition over window qualify rows range unbounded preceding following current row asc desc nulls first last collate totals rollup cube sample final interval true false if format settings",
  types:
    "uint8 uint16 uint32 uint64 uint128 uint256 int8 int16 int32 int64 int128 int256 float32 float64 decimal string fixedstring uuid date date32 datetime datetime64 bool enum8 enum16 lowcardinality nullable array map tuple ipv4 ipv6",
  backslashEscapes: true,
  hashComments: true,
  identifierQuotes: '`"',
  caseInsensitiveIdentifiers: true,
});

export type Column = { name: string; type: string };

export type SqlEditor = {
  view: EditorView;
  value(): string;
  set(text: string): void;
  focus(): void;
  /** The `events` view's columns, offered as completions (unqualified and after `events.`). */
  setColumns(columns: Column[]): void;
  /** Underlines the character at a 1-based position of the text and puts the cursor there. */
  markError(position: number): { line: number; column: number } | null;
  clearError(): void;
};

const setError = StateEffect.define<{ from: number; to: number } | null>();
const errorMark = Decoration.mark({ class: "cm-sql-error", attributes: { title: "The error is here" } });

const errorField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(marks, tr) {
    let next = tr.docChanged ? Decoration.none : marks;
    for (const e of tr.effects) {
      if (e.is(setError)) {
        next = e.value ? Decoration.set([errorMark.range(e.value.from, e.value.to)]) : Decoration.none;
      }
    }
    return next;
  },
  provide: (f) => EditorView.decorations.from(f),
});

const theme = EditorView.theme({
  "&": { border: "1px solid #c5cad3", background: "#fff", fontSize: "0.95rem" },
  "&.cm-focused": { outline: "3px solid #2f6fde", outlineOffset: "2px" },
  ".cm-scroller": {
    fontFamily: "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace",
    minHeight: "8rem",
    maxHeight: "24rem",
  },
  ".cm-content": { padding: "0.4rem 0" },
  ".cm-sql-error": { textDecoration: "underline wavy #a40000", background: "#fde8e8" },
});

function completions(columns: Column[]): Completion[] {
  return columns.map((c) => ({ label: c.name, type: "property", detail: c.type, boost: 1 }));
}

function language(columns: Column[]) {
  return sql({
    dialect: ClickHouse,
    schema: { events: completions(columns) },
    defaultTable: "events",
    upperCaseKeywords: true,
  });
}

export function sqlEditor(
  parent: HTMLElement,
  opts: { doc: string; labelledBy: string; describedBy?: string; onRun: () => void },
): SqlEditor {
  const lang = new Compartment();
  const run = () => {
    opts.onRun();
    return true;
  };
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: opts.doc,
      extensions: [
        // Before the completion popup's own Enter: Ctrl/Cmd-Enter always runs.
        Prec.highest(keymap.of([{ key: "Mod-Enter", run }])),
        lineNumbers(),
        history(),
        drawSelection(),
        bracketMatching(),
        highlightActiveLine(),
        syntaxHighlighting(defaultHighlightStyle),
        autocompletion(),
        keymap.of([...defaultKeymap, ...historyKeymap]),
        lang.of(language([])),
        errorField,
        theme,
        placeholder("SELECT count() FROM events"),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({
          "aria-labelledby": opts.labelledBy,
          ...(opts.describedBy ? { "aria-describedby": opts.describedBy } : {}),
        }),
      ],
    }),
  });
  return {
    view,
    value: () => view.state.doc.toString(),
    set(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    focus: () => view.focus(),
    setColumns(columns) {
      view.dispatch({ effects: lang.reconfigure(language(columns)) });
    },
    markError(position) {
      const doc = view.state.doc;
      if (!Number.isInteger(position) || position < 1 || doc.length === 0) {
        return null;
      }
      const from = Math.min(position - 1, doc.length - 1);
      // The word that starts there, else the one character.
      const word = view.state.wordAt(from);
      const to = word && word.from === from ? word.to : from + 1;
      view.dispatch({
        effects: [setError.of({ from, to }), EditorView.scrollIntoView(from)],
        selection: { anchor: from },
      });
      const line = doc.lineAt(from);
      return { line: line.number, column: from - line.from + 1 };
    },
    clearError() {
      view.dispatch({ effects: setError.of(null) });
    },
  };
}
