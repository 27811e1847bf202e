import type { Schemas } from "./api.js";
import { h } from "./dom.js";

// Grid cells drawn over a map's image at its world bounds, with a tooltip per cell. Shared by the
// heatmap and the build comparison's difference map. World x grows to the right of the image and
// world y upwards (north at the top of the image, as top-down game maps are drawn): the image spans
// [worldMinX, worldMaxX] × [worldMinY, worldMaxY].
//
// The cells must read over any map, green ones over a green map too: the image is drawn in greys and
// lightened (no map colour competes with the cells' colours), and each cell large enough for it gets a
// dark edge, so a cell stands out by its outline as well as by its hue (which not everyone sees).

export type MapRecord = Schemas["Map"];

/**
 * A cell as drawn: its origin, fill colour, the class a test or a legend reads, and tooltip lines;
 * `more`, when given, fetches fuller lines once the pointer or the keyboard rests on the cell (`final`
 * false: they tell of a failure, and the next visit asks again).
 */
export type DrawnCell = {
  x: number;
  y: number;
  fill: string;
  cls: string;
  value: number | null;
  lines: string[];
  more?: () => Promise<{ lines: string[]; final: boolean }>;
};

/** How long the tooltip stays on a cell before `more` is asked: a sweep across the map asks nothing. */
const MORE_AFTER_MS = 150;
/** Cells narrower than this on the canvas get no edge (it would hide their colour). */
const EDGE_MIN_PX = 8;
/** The cells' edge: dark, half opaque. */
const EDGE = "rgb(27 31 36 / 0.6)";

export type DrawReport = { cells: DrawnCell[]; renderMs: number; cellSize: number; mapId: string };

declare global {
  interface Window {
    /** What the last map drawing put on screen, by canvas id (read by the browser tests). */
    dashboardMaps?: Record<string, DrawReport>;
  }
}

/**
 * Loads the map image (through the API, with the session) and draws `cells` of `cellSize` over it.
 * Resolves once drawn; the canvas carries data-cells (count) and data-render-ms.
 */
export async function drawMap(
  container: HTMLElement,
  opts: {
    id: string;
    map: MapRecord;
    cellSize: number;
    cells: DrawnCell[];
    label: string;
    /** A cell clicked, or Enter on the keyboard's focus cell (the heatmap opens its panel). */
    onSelect?: (cell: DrawnCell) => void;
  },
): Promise<DrawReport> {
  const { map, cellSize } = opts;
  const img = new Image();
  img.decoding = "async";
  img.src = map.imageUrl;
  await img.decode().catch(() => {
    throw new Error(`The image of map ${map.name} could not be loaded.`);
  });
  const W = map.imageWidth || img.naturalWidth;
  const H = map.imageHeight || img.naturalHeight;
  const canvas = h("canvas", {
    id: opts.id,
    width: W,
    height: H,
    role: "img",
    "aria-label": opts.label,
    tabindex: 0,
  });
  const tip = h("div", { class: "tooltip", role: "tooltip", hidden: true });
  // The map takes the panel's width, and at most one screen of height (--aspect: width over height).
  const wrap = h("div", { class: "map-wrap", style: `--aspect: ${W / H}` }, canvas, tip);
  container.append(
    h(
      "p",
      { class: "muted hint" },
      "Hover a cell for its numbers, or focus the map (Tab) and move with the arrow keys; click a cell (or press Enter) to open it.",
    ),
    wrap,
  );

  const t0 = performance.now();
  const ctx = canvas.getContext("2d");
  if (!ctx) {
    throw new Error("This browser cannot draw on a canvas.");
  }
  // The map in greys, lightened by a white veil (which also lightens it where `filter` is not supported).
  ctx.filter = "grayscale(1)";
  ctx.drawImage(img, 0, 0, W, H);
  ctx.filter = "none";
  ctx.fillStyle = "rgb(255 255 255 / 0.35)";
  ctx.fillRect(0, 0, W, H);
  const sx = W / (map.worldMaxX - map.worldMinX);
  const sy = H / (map.worldMaxY - map.worldMinY);
  const byKey = new Map<string, DrawnCell>();
  ctx.globalAlpha = 0.7;
  // One fillStyle change per colour run: cells come sorted by x, y, so neighbours often share one.
  let current = "";
  for (const c of opts.cells) {
    byKey.set(`${c.x}:${c.y}`, c);
    if (c.fill !== current) {
      ctx.fillStyle = c.fill;
      current = c.fill;
    }
    const px = (c.x - map.worldMinX) * sx;
    const py = (map.worldMaxY - (c.y + cellSize)) * sy;
    ctx.fillRect(px, py, Math.max(1, cellSize * sx), Math.max(1, cellSize * sy));
  }
  ctx.globalAlpha = 1;
  // Each cell's edge, inside it, where cells are at least EDGE_MIN_PX wide: one path, one stroke.
  const cw = cellSize * sx;
  const ch = cellSize * sy;
  if (Math.min(cw, ch) >= EDGE_MIN_PX) {
    const lw = Math.max(1, Math.round(Math.min(cw, ch) / 25));
    ctx.beginPath();
    for (const c of opts.cells) {
      const px = (c.x - map.worldMinX) * sx;
      const py = (map.worldMaxY - (c.y + cellSize)) * sy;
      ctx.rect(px + lw / 2, py + lw / 2, cw - lw, ch - lw);
    }
    ctx.lineWidth = lw;
    ctx.strokeStyle = EDGE;
    ctx.stroke();
  }
  const renderMs = performance.now() - t0;
  canvas.dataset.cells = String(opts.cells.length);
  canvas.dataset.renderMs = renderMs.toFixed(1);

  // The cell under the pointer, found by its origin; with the keyboard, arrow keys move a focus cell
  // (outlined) from cell to cell of the grid and show the same tooltip.
  const show = (lines: string[]) => tip.replaceChildren(...lines.flatMap((l, i) => (i ? [h("br"), l] : [l])));
  // The cell the tooltip shows, the timer that asks for its fuller lines, and the lines already had
  // (a cell visited again shows them at once).
  let shown = "";
  let asking: ReturnType<typeof setTimeout> | undefined;
  const fuller = new Map<string, string[]>();
  const hide = () => {
    tip.hidden = true;
    shown = "";
    clearTimeout(asking);
  };
  const place = (cell: DrawnCell | undefined, left: number, top: number) => {
    if (!cell) {
      hide();
      return;
    }
    const key = `${cell.x}:${cell.y}`;
    if (key !== shown) {
      shown = key;
      const had = fuller.get(key);
      show(had ?? cell.lines);
      clearTimeout(asking);
      const more = cell.more;
      if (more && !had) {
        asking = setTimeout(() => {
          void more().then(({ lines, final }) => {
            if (final) {
              fuller.set(key, lines);
            }
            // Still the same cell: the pointer may have moved on while the answer was coming.
            if (shown === key) {
              show(lines);
            }
          });
        }, MORE_AFTER_MS);
      }
    }
    tip.hidden = false;
    // Right of the point, or left of it where it would pass the map's right edge (the page would scroll).
    const right = left + 14;
    tip.style.left = `${right + tip.offsetWidth > wrap.clientWidth ? Math.max(0, left - 14 - tip.offsetWidth) : right}px`;
    tip.style.top = `${top + 14}px`;
    tip.dataset.cell = key;
  };
  /** The drawn cell under the pointer, if any. */
  const cellAt = (ev: MouseEvent) => {
    const r = canvas.getBoundingClientRect();
    const wx = map.worldMinX + ((ev.clientX - r.left) * (W / r.width)) / sx;
    const wy = map.worldMaxY - ((ev.clientY - r.top) * (H / r.height)) / sy;
    return byKey.get(`${Math.floor(wx / cellSize) * cellSize}:${Math.floor(wy / cellSize) * cellSize}`);
  };
  canvas.addEventListener("mousemove", (ev) => {
    const r = canvas.getBoundingClientRect();
    place(cellAt(ev), ev.clientX - r.left, ev.clientY - r.top);
  });
  // A press focuses the canvas: the focus cell becomes the one pressed before the focus handler outlines
  // it (the first cell is where the keyboard starts, not where a click lands).
  canvas.addEventListener("mousedown", (ev) => {
    at = cellAt(ev) ?? at;
  });
  canvas.addEventListener("click", (ev) => {
    const cell = cellAt(ev);
    if (cell) {
      at = cell;
      showFocus();
      opts.onSelect?.(cell);
    }
  });
  canvas.addEventListener("mouseleave", hide);
  const focus = h("div", { class: "cell-focus", hidden: true });
  wrap.append(focus);
  let at = opts.cells[0];
  const showFocus = () => {
    if (!at) {
      return;
    }
    const r = canvas.getBoundingClientRect();
    const kx = r.width / W;
    const ky = r.height / H;
    const left = (at.x - map.worldMinX) * sx * kx;
    const top = (map.worldMaxY - (at.y + cellSize)) * sy * ky;
    Object.assign(focus.style, {
      left: `${left}px`,
      top: `${top}px`,
      width: `${Math.max(2, cellSize * sx * kx)}px`,
      height: `${Math.max(2, cellSize * sy * ky)}px`,
    });
    focus.hidden = false;
    place(at, left + cellSize * sx * kx, top);
  };
  canvas.addEventListener("focus", showFocus);
  canvas.addEventListener("blur", () => {
    focus.hidden = true;
    hide();
  });
  canvas.addEventListener("keydown", (ev) => {
    const step: Record<string, [number, number]> = {
      ArrowLeft: [-1, 0],
      ArrowRight: [1, 0],
      ArrowUp: [0, 1],
      ArrowDown: [0, -1],
    };
    if (ev.key === "Enter" && at) {
      ev.preventDefault();
      opts.onSelect?.(at);
      return;
    }
    const d = step[ev.key];
    if (!d || !at) {
      return;
    }
    ev.preventDefault();
    // The next drawn cell in that direction, skipping empty ones (up to the map's edge).
    const span = Math.ceil(Math.max(map.worldMaxX - map.worldMinX, map.worldMaxY - map.worldMinY) / cellSize);
    for (let k = 1; k <= span; k++) {
      const next = byKey.get(`${at.x + d[0] * k * cellSize}:${at.y + d[1] * k * cellSize}`);
      if (next) {
        at = next;
        break;
      }
    }
    showFocus();
  });

  const report: DrawReport = { cells: opts.cells, renderMs, cellSize, mapId: map.mapId };
  window.dashboardMaps = { ...window.dashboardMaps, [opts.id]: report };
  return report;
}

export { rampColour } from "./fills.js";

export function legend(items: { fill: string; label: string }[]): HTMLElement {
  return h(
    "div",
    { class: "legend" },
    items.map((i) => h("span", {}, h("span", { class: "swatch", style: `background:${i.fill}` }), i.label)),
  );
}
