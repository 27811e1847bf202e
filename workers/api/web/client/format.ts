// Numbers as the pages write them: no DOM here, so pure modules (and their unit tests) can use it.

const intFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
const decFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 });

/** Integers with separators; other numbers to 2 decimals; null as an em dash. */
export function fmt(n: number | null | undefined, unit = ""): string {
  if (n === null || n === undefined || !Number.isFinite(n)) {
    return "—";
  }
  const s = Number.isInteger(n) ? intFmt.format(n) : decFmt.format(n);
  return unit ? `${s} ${unit}` : s;
}
