import { describe, expect, it } from "vitest";
import { barRange } from "../../workers/api/web/client/bar-range.js";

// A bar's length is its value: the dashboard's bar charts (overview, funnels, insights, the SQL page's
// two-column answers, the cell panel) keep zero on the axis.
describe("barRange", () => {
  it("starts at zero for positive values, with 5 % room past the longest bar", () => {
    expect(barRange(30, 45)).toEqual([0, 47.25]);
  });
  it("ends at zero for negative values", () => {
    expect(barRange(-20, -10)).toEqual([-21, 0]);
  });
  it("holds both sides when values straddle zero", () => {
    expect(barRange(-10, 30)).toEqual([-12, 32]);
  });
  it("gives a unit range when every value is zero or there are none", () => {
    expect(barRange(0, 0)).toEqual([0, 1]);
    expect(barRange(null, null)).toEqual([0, 1]);
  });
});
