import { describe, expect, it } from "vitest";
import { diffFill, UNCHANGED_FILL } from "../../workers/api/web/client/diff-colours.js";

// The difference map's colours (workers/api/web/client/diff-colours.ts): at every magnitude a worse or
// better cell is far from the unchanged grey, and worse from better.

/** hsl(h s% l%) to RGB (0…255), CSS Color 4's conversion. */
function rgb(css: string): [number, number, number] {
  const m = css.match(/^hsl\((\d+(?:\.\d+)?) (\d+(?:\.\d+)?)% (\d+(?:\.\d+)?)%\)$/);
  if (!m) {
    throw new Error(css);
  }
  const [h, s, l] = [Number(m[1]), Number(m[2]) / 100, Number(m[3]) / 100];
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    const a = s * Math.min(l, 1 - l);
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

const distance = (a: string, b: string) => {
  const [p, q] = [rgb(a), rgb(b)];
  return Math.hypot(p[0] - q[0], p[1] - q[1], p[2] - q[2]);
};

describe("the difference map's colours", () => {
  const steps = Array.from({ length: 21 }, (_, i) => i / 20);

  it("a changed cell, however small the change, is far from unchanged", () => {
    for (const t of steps) {
      expect(distance(diffFill(t, true), UNCHANGED_FILL), `worse ${t}`).toBeGreaterThan(60);
      expect(distance(diffFill(t, false), UNCHANGED_FILL), `better ${t}`).toBeGreaterThan(60);
    }
  });

  it("worse and better keep their hues: red and green", () => {
    for (const t of steps) {
      const [r, g] = rgb(diffFill(t, true));
      const [r2, g2] = rgb(diffFill(t, false));
      expect(r).toBeGreaterThan(g);
      expect(g2).toBeGreaterThan(r2);
      expect(distance(diffFill(t, true), diffFill(t, false)), `${t}`).toBeGreaterThan(60);
    }
  });

  it("darker as the change grows", () => {
    const light = (css: string) => rgb(css).reduce((a, b) => a + b, 0);
    expect(light(diffFill(1, true))).toBeLessThan(light(diffFill(0, true)));
    expect(light(diffFill(1, false))).toBeLessThan(light(diffFill(0, false)));
  });
});
