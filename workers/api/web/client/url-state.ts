import { h } from "./dom.js";

// A page's state lives in its query string, so a link shows what the sender saw. Controls are built
// from a spec; their values come from the URL (else the default) and every change rewrites the URL
// (replaceState: the back button leaves the page rather than stepping through every tweak).

export type Control =
  | { name: string; label: string; kind: "select"; options: { value: string; label: string }[]; def: string }
  | { name: string; label: string; kind: "text"; def: string; placeholder?: string; list?: string[] };

export type State = Record<string, string>;

export function readState(controls: Control[]): State {
  const params = new URLSearchParams(location.search);
  const state: State = {};
  for (const c of controls) {
    const v = params.get(c.name);
    const allowed = c.kind === "select" ? c.options.some((o) => o.value === v) : true;
    state[c.name] = v !== null && allowed ? v : c.def;
  }
  return state;
}

/** Writes the state into the URL, leaving out values equal to their default. */
export function writeState(controls: Control[], state: State): void {
  const params = new URLSearchParams(location.search);
  for (const c of controls) {
    const v = state[c.name] ?? c.def;
    if (v === c.def) {
      params.delete(c.name);
    } else {
      params.set(c.name, v);
    }
  }
  const qs = params.toString();
  history.replaceState(null, "", `${location.pathname}${qs ? `?${qs}` : ""}`);
}

/**
 * A form of labelled controls bound to the URL: `onChange` runs with the new state after each change
 * (text fields on change, i.e. Enter or leaving the field).
 */
export function controlsForm(
  controls: Control[],
  onChange: (state: State) => void,
): { form: HTMLFormElement; state: State; set(name: string, value: string): void } {
  const state = readState(controls);
  const form = h("form", { class: "controls", role: "search" });
  const inputs = new Map<string, HTMLInputElement | HTMLSelectElement>();
  for (const c of controls) {
    const id = `ctl-${c.name}`;
    let input: HTMLInputElement | HTMLSelectElement;
    if (c.kind === "select") {
      input = h(
        "select",
        { id, name: c.name },
        c.options.map((o) => h("option", { value: o.value, selected: o.value === state[c.name] }, o.label)),
      );
    } else {
      const listId = c.list ? `${id}-list` : undefined;
      input = h("input", {
        id,
        name: c.name,
        type: "text",
        value: state[c.name] ?? "",
        placeholder: c.placeholder,
        list: listId,
      });
      if (c.list && listId) {
        form.append(
          h(
            "datalist",
            { id: listId },
            c.list.map((v) => h("option", { value: v })),
          ),
        );
      }
    }
    inputs.set(c.name, input);
    input.addEventListener("change", () => {
      state[c.name] = input.value.trim();
      writeState(controls, state);
      onChange({ ...state });
    });
    form.append(h("label", { for: id }, c.label, input));
  }
  form.addEventListener("submit", (e) => e.preventDefault());
  return {
    form,
    state,
    set(name, value) {
      state[name] = value;
      const input = inputs.get(name);
      if (input) {
        input.value = value;
      }
      writeState(controls, state);
    },
  };
}

const DAYS = ["7", "14", "30", "90"] as const;
/** A period DAYS_OPTIONS offers: a `days` the analytics reads take (a select's value is one of its options). */
export type Days = (typeof DAYS)[number];
export const DAYS_OPTIONS = DAYS.map((d) => ({ value: d, label: `Last ${d} days` }));
