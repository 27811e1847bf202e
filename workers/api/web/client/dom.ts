// Building DOM without innerHTML: every text goes in as text, so API values can never become markup.

type Attrs = Record<string, string | number | boolean | undefined | null | EventListener>;
type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) {
      continue;
    }
    if (typeof v === "function") {
      el.addEventListener(k.replace(/^on/, ""), v);
    } else if (v === true) {
      el.setAttribute(k, "");
    } else {
      el.setAttribute(k, String(v));
    }
  }
  for (const c of children.flat()) {
    if (c !== null && c !== undefined && c !== false) {
      el.append(c instanceof Node ? c : String(c));
    }
  }
  return el;
}

export function clear(el: Element, ...children: Node[]): void {
  el.replaceChildren(...children);
}

export { fmt } from "./format.js";
