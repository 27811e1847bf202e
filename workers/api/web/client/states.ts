import { ApiProblem } from "./api.js";
import { clear, h } from "./dom.js";

// Loading, empty and error states, the same on every page: a person always sees which one it is.

export function loading(el: Element, what = "Loading…"): void {
  clear(el, h("p", { class: "state loading", role: "status" }, what));
}

export function empty(el: Element, message: string): void {
  clear(el, h("p", { class: "state empty", role: "status" }, message));
}

/** The problem's `detail` as the API wrote it. */
export function failed(el: Element, err: unknown): void {
  const detail =
    err instanceof ApiProblem ? err.detail : err instanceof Error ? err.message : "Something went wrong.";
  clear(el, h("p", { class: "state error", role: "alert" }, detail));
}

/**
 * Shows loading in `el`, runs `load`, then `render`s its result (awaited: a drawing that fails shows
 * its error too), `empty` when `isEmpty` says so, or the
 * error. A later call on the same element wins: an answer that arrives after a newer request was made
 * (the person changed a control meanwhile) is dropped.
 */
const generations = new WeakMap<Element, number>();
export async function withStates<T>(
  el: Element,
  load: () => Promise<T>,
  render: (data: T) => void | Promise<void>,
  opts: { isEmpty?: (data: T) => boolean; emptyMessage?: string; loadingMessage?: string } = {},
): Promise<void> {
  const gen = (generations.get(el) ?? 0) + 1;
  generations.set(el, gen);
  el.setAttribute("aria-busy", "true");
  loading(el, opts.loadingMessage);
  try {
    const data = await load();
    if (generations.get(el) !== gen) {
      return;
    }
    if (opts.isEmpty?.(data)) {
      empty(el, opts.emptyMessage ?? "Nothing here yet.");
    } else {
      clear(el);
      await render(data);
    }
  } catch (err) {
    if (generations.get(el) === gen) {
      failed(el, err);
    }
  } finally {
    if (generations.get(el) === gen) {
      el.removeAttribute("aria-busy");
    }
  }
}
