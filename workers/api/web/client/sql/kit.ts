import type { ApiProblem, api, dataOf } from "../api.js";
import type { barChart, timeChart } from "../chart.js";

/**
 * What the SQL page's bundle borrows from the dashboard bundle that loaded it: the API client and the
 * uPlot charts. Passed in rather than imported, so openapi-fetch and uPlot are not bundled twice: the
 * SQL bundle holds the page and CodeMirror, nothing the dashboard bundle already has but a few DOM
 * helpers (test/node/bundles.test.ts checks its packages).
 */
export type SqlKit = {
  api: typeof api;
  dataOf: typeof dataOf;
  ApiProblem: typeof ApiProblem;
  timeChart: typeof timeChart;
  barChart: typeof barChart;
};
