import type { components } from "../../workers/api/web/client/api.gen.js";

type Cell = components["schemas"]["HeatmapCell"];

/**
 * A heatmap cell at (x, 0) as the API answers it, with `count` events and no metric sampled, plus the
 * mode's fields (`why=1`, `hitches=1`) a painter test gives: the map modes' unit tests build theirs here.
 */
export function heatmapCell(x: number, count: number, fields: Partial<Cell> = {}): Cell {
  return {
    x,
    y: 0,
    weight: count,
    event_count: count,
    avg_fps: 0,
    avg_frame_time: 0,
    avg_memory: 0,
    avg_gpu_time: null,
    avg_mem_vram: null,
    ...fields,
  };
}
