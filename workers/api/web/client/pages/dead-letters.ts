import { api, dataOf, type Schemas } from "../api.js";
import { clear, fmt, h } from "../dom.js";
import { bytes, count, firstLoad, progressBar } from "../jobs.js";
import type { PageContext } from "../page.js";
import { failed } from "../states.js";
import { dataTable, when } from "../table.js";

type DeadLetter = Schemas["DeadLetter"];

/** Replay calls one click may make: each sends up to 25 batches, so 40 calls cover 1,000. */
const MAX_CALLS = 40;

/**
 * Dead letters: the project's parked batches (GET …/dead-letters: when, batch key, size, attempts,
 * why), and Replay, which calls POST …/dead-letters/replay until it says none remain, showing how many
 * went back to the events queue. Replay is the API's: repeating it adds nothing, since the consumer
 * skips events it already holds; a batch that fails again is parked again and listed again.
 */
export async function deadLetters({ root, projectId }: PageContext): Promise<void> {
  const list = h("div", {});
  const progress = h("p", { role: "status", class: "replay-status" });
  const replay = h("button", { type: "button" }, "Replay all");
  const controls = h("p", { class: "actions" }, replay);
  root.append(
    h("h1", {}, "Dead letters"),
    h(
      "p",
      { class: "muted" },
      "Event batches the pipeline could not store after its retries are parked here byte for byte. " +
        "Replaying sends them back to the events queue; events already stored are never counted twice.",
    ),
    h(
      "section",
      { class: "panel", "aria-labelledby": "dead-letters-h" },
      h("h2", { id: "dead-letters-h" }, "Parked batches"),
      controls,
      progress,
      list,
    ),
  );

  let parked: DeadLetter[] = [];
  const render = () => {
    replay.disabled = parked.length === 0;
    if (parked.length === 0) {
      clear(
        list,
        h("p", { class: "state empty", role: "status" }, "No parked batches: every batch was stored."),
      );
      return;
    }
    clear(
      list,
      h(
        "p",
        {},
        parked.length >= 100
          ? "The oldest 100 parked batches:"
          : `${count(parked.length, "parked batch", "parked batches")}:`,
      ),
      dataTable(
        "dead-letters",
        [
          { label: "Parked", cell: (d) => when(d.parkedAt) },
          { label: "Batch", cell: (d) => h("code", {}, d.batchKey) },
          { label: "Size", num: true, cell: (d) => bytes(d.size) },
          { label: "Attempts", num: true, cell: (d) => fmt(d.attempts) },
          { label: "Reason", cell: (d) => d.reason ?? "Not recorded" },
        ],
        parked,
      ),
    );
  };
  const load = async () => {
    parked = await dataOf(api.GET("/v1/projects/{id}/dead-letters", { params: { path: { id: projectId } } }));
    render();
  };

  replay.addEventListener("click", () => {
    void (async () => {
      replay.disabled = true;
      const before = parked.length;
      let sent = 0;
      try {
        for (let call = 0; call < MAX_CALLS; call++) {
          clear(
            progress,
            progressBar(
              "Replay progress",
              sent,
              Math.max(before, sent, 1),
              `Replaying: ${fmt(sent)} of ${fmt(before)}${before >= 100 ? "+" : ""} batches sent back…`,
            ),
          );
          const answer = await dataOf(
            api.POST("/v1/projects/{id}/dead-letters/replay", { params: { path: { id: projectId } } }),
          );
          sent += answer.replayed;
          if (!answer.remaining) {
            break;
          }
        }
        await load();
        clear(
          progress,
          progressBar(
            "Replay progress",
            1,
            1,
            parked.length === 0
              ? `Replayed ${count(sent, "batch", "batches")}. None remain.`
              : `Replayed ${count(sent, "batch", "batches")}; ${count(parked.length, "batch", "batches")} parked (again or still): see the reason.`,
          ),
        );
      } catch (err) {
        failed(progress, err);
        replay.disabled = false;
      }
    })();
  });

  const first = await firstLoad(list, "Dead letters", () =>
    dataOf(api.GET("/v1/projects/{id}/dead-letters", { params: { path: { id: projectId } } })),
  );
  if (first === null) {
    controls.remove();
    return;
  }
  parked = first;
  render();
}
