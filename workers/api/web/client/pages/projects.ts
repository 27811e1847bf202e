import { api, dataOf } from "../api.js";
import { fmt, h } from "../dom.js";
import type { PageContext } from "../page.js";
import { failed, withStates } from "../states.js";

/**
 * The project list (server-rendered from the user's studios) gets each project's status KPIs from
 * GET /v1/projects/{id}/status: the session reaches every project of the user's studios.
 */
export async function projects({ root }: PageContext): Promise<void> {
  const slots = [...root.querySelectorAll<HTMLElement>("[data-status-for]")];
  await Promise.all(
    slots.map((slot) =>
      withStates(
        slot,
        () =>
          dataOf(
            api.GET("/v1/projects/{id}/status", { params: { path: { id: slot.dataset.statusFor ?? "" } } }),
          ),
        (s) =>
          slot.append(
            h(
              "dl",
              { class: "kpis" },
              kpi("Events (24 h)", fmt(s.kpis.events24h)),
              kpi("Players (24 h)", fmt(s.kpis.players24h)),
              kpi("Events (kept)", fmt(s.kpis.totalEvents)),
              kpi("Retention", `${fmt(s.retention.days)} days, since ${s.retention.retainedFrom}`),
              kpi(
                "Last event",
                s.kpis.lastEventAt ? `${s.kpis.lastEventAt.slice(0, 16).replace("T", " ")} UTC` : "None yet",
              ),
              kpi("Active alert rules", fmt(s.kpis.activeAlertRules)),
            ),
          ),
      ).catch((err) => failed(slot, err)),
    ),
  );
}

export function kpi(label: string, value: string): HTMLElement {
  return h("div", { class: "kpi", "data-kpi": label }, h("dt", {}, label), h("dd", {}, value));
}
