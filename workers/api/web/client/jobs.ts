import { ApiProblem } from "./api.js";
import { clear, fmt, h } from "./dom.js";
import { failed, loading } from "./states.js";

// What the data-administration pages (Exports, Player erasure, Dead letters) share: their first read,
// which tells a member (no data:admin) that the page is the owners', a progress bar with its words, and
// the polling of a job until it is done.

/**
 * The page's first read into `el`: loading, then the data; a 403 (a member's session, a key without
 * data:admin) says the page is for the studio's owners; any other refusal shows the API's detail.
 * Null when it failed.
 */
export async function firstLoad<T>(el: Element, what: string, load: () => Promise<T>): Promise<T | null> {
  loading(el);
  try {
    const data = await load();
    clear(el);
    return data;
  } catch (err) {
    if (err instanceof ApiProblem && err.status === 403) {
      clear(
        el,
        h(
          "p",
          { class: "state error", role: "alert", "data-owners-only": "" },
          `${what} is for the studio's owners: ask an owner, or use an API key with the data:admin scope.`,
        ),
      );
    } else {
      failed(el, err);
    }
    return null;
  }
}

/**
 * A labelled progress bar: `value` of `max`, or moving without a value (null) while the end is not
 * known; `text` says the same in words beside it.
 */
export function progressBar(
  label: string,
  value: number | null,
  max: number | null,
  text: string,
): HTMLElement {
  const bar = h("progress", { "aria-label": label, style: "width:7rem" });
  if (value !== null && max !== null) {
    bar.max = max;
    bar.value = Math.min(value, max);
  }
  return h("span", { class: "progress" }, bar, " ", h("span", {}, text));
}

/** Runs `tick` every `ms` (after the previous tick finished) until it returns true. */
export function every(ms: number, tick: () => Promise<boolean>): void {
  const run = async () => {
    let done = false;
    try {
      done = await tick();
    } catch {
      done = false;
    }
    if (!done) {
      setTimeout(() => void run(), ms);
    }
  };
  setTimeout(() => void run(), ms);
}

const UNITS = ["bytes", "KB", "MB", "GB", "TB"];

/** Bytes in the largest unit that keeps the number at or above 1 (1,000-based). */
export function bytes(n: number | null | undefined): string {
  if (n === null || n === undefined) {
    return "—";
  }
  let v = n;
  let unit = 0;
  while (v >= 1000 && unit < UNITS.length - 1) {
    v /= 1000;
    unit++;
  }
  return fmt(unit === 0 ? v : Math.round(v * 10) / 10, UNITS[unit]);
}

/** "1 batch", "2 batches": a count with its noun. */
export function count(n: number, one: string, many = `${one}s`): string {
  return `${fmt(n)} ${n === 1 ? one : many}`;
}
