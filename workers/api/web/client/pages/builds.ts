import { api, dataOf } from "../api.js";
import { fmt, h } from "../dom.js";
import type { PageContext } from "../page.js";
import { withStates } from "../states.js";
import { dataTable, when } from "../table.js";
import { type Control, controlsForm, DAYS_OPTIONS, type Days } from "../url-state.js";
import { verdictCountsText } from "../why.js";

const CONTROLS: Control[] = [
  { name: "days", label: "Period", kind: "select", options: DAYS_OPTIONS, def: "30" },
];

const VERDICT_MARK: Record<string, string> = {
  regressed: "▲",
  improved: "▼",
  no_change: "=",
  insufficient_data: "?",
};
const METRIC_NAMES = {
  frame_time: "frame time",
  fps: "fps",
  gpu_time: "GPU time",
  memory: "memory",
  poor_session_share: "poor sessions",
} as const;

/** A build's kept verdicts against its baseline, one short line per metric, regressions first. */
function verdictCell(b: {
  verdict: {
    baseline_build_id: string;
    baseline_pinned: boolean;
    metrics: Partial<Record<keyof typeof METRIC_NAMES, { verdict: string; diff_pct: number | null } | null>>;
  } | null;
}): HTMLElement | string {
  const v = b.verdict;
  if (!v) {
    return "not judged yet";
  }
  const metrics = (Object.keys(METRIC_NAMES) as Array<keyof typeof METRIC_NAMES>)
    .map((m) => [m, v.metrics[m] ?? null] as const)
    .filter(([, r]) => r !== null);
  const regressed = metrics.filter(([, r]) => r?.verdict === "regressed");
  return h(
    "span",
    { class: regressed.length ? "regression" : "", "data-verdict": regressed.length ? "regressed" : "ok" },
    `vs ${v.baseline_build_id}${v.baseline_pinned ? " (pinned)" : ""}: `,
    metrics
      .map(([m, r]) => {
        const pct =
          r?.diff_pct === null || r?.diff_pct === undefined
            ? ""
            : ` ${r.diff_pct > 0 ? "+" : ""}${fmt(r.diff_pct)} ${m === "poor_session_share" ? "pts" : "%"}`;
        return `${METRIC_NAMES[m]} ${VERDICT_MARK[r?.verdict ?? ""] ?? ""}${r?.verdict === "insufficient_data" ? "" : pct}`;
      })
      .join(", "),
  );
}

/** The builds that sent performance samples in the period, newest first, each linking to Compare. */
export async function builds({ root, projectId }: PageContext): Promise<void> {
  const body = h("section", { class: "panel", "aria-label": "Builds" });
  const controls = controlsForm(CONTROLS, (s) => void load(s.days ?? "30"));
  root.append(h("h1", {}, "Builds"), controls.form, body);

  function load(days: string) {
    return withStates(
      body,
      () =>
        dataOf(
          api.GET("/v1/projects/{id}/builds", {
            params: { path: { id: projectId }, query: { days: days as Days } },
          }),
        ),
      (list) => {
        body.append(
          dataTable(
            "builds",
            [
              { label: "Build", cell: (b) => b.build_id },
              // The actions first: the table is wider than the panel at 1280 px, and they must stay in reach.
              {
                label: "Baseline",
                cell: (b) =>
                  h(
                    "button",
                    {
                      type: "button",
                      class: b.pinned_baseline ? undefined : "secondary",
                      "data-pin": b.build_id,
                      "aria-pressed": String(b.pinned_baseline),
                      onclick: async () => {
                        if (b.pinned_baseline) {
                          await api.DELETE("/v1/projects/{id}/builds/baseline", {
                            params: { path: { id: projectId } },
                          });
                        } else {
                          await api.PUT("/v1/projects/{id}/builds/baseline", {
                            params: { path: { id: projectId } },
                            body: { buildId: b.build_id },
                          });
                        }
                        await load(controls.state.days ?? "30");
                      },
                    },
                    b.pinned_baseline ? "Pinned: unpin" : "Pin as baseline",
                  ),
              },
              {
                label: "Compare",
                cell: (b) => {
                  // Against the build before it in the list (the previous release), when there is one.
                  const prev = list[list.indexOf(b) + 1];
                  return prev
                    ? h(
                        "a",
                        {
                          href: `/projects/${projectId}/compare?baseline=${encodeURIComponent(prev.build_id)}&candidate=${encodeURIComponent(b.build_id)}`,
                        },
                        `vs ${prev.build_id}`,
                      )
                    : "—";
                },
              },
              { label: "Events", num: true, cell: (b) => fmt(b.event_count) },
              { label: "Sessions", num: true, cell: (b) => fmt(b.session_count) },
              { label: "Players", num: true, cell: (b) => fmt(b.player_count) },
              { label: "Verdict vs baseline", cell: verdictCell },
              {
                label: "Sessions by verdict",
                cell: (b) => {
                  const v = b.verdict?.session_verdicts;
                  return v
                    ? verdictCountsText({
                        good: v.good,
                        acceptable: v.acceptable,
                        poor: v.poor,
                        unjudged: v.unjudged,
                        poorShare: v.poor_share,
                      })
                    : "—";
                },
              },
              { label: "First seen", cell: (b) => when(b.first_seen) },
              { label: "Last seen", cell: (b) => when(b.last_seen) },
            ],
            list,
          ),
        );
      },
      {
        isEmpty: (list) => list.length === 0,
        emptyMessage: `No build sent performance samples in the last ${days} days.`,
      },
    );
  }
  await load(controls.state.days ?? "30");
}
