import { api, dataOf, type Schemas } from "../api.js";
import { h } from "../dom.js";
import { actionAlert, field, onSubmit, rowAction, textOrNull } from "../edit-form.js";
import type { PageContext } from "../page.js";
import { withStates } from "../states.js";
import { dataTable, when } from "../table.js";
import { type Control, controlsForm } from "../url-state.js";

type Entry = Schemas["ContentEntry"];

const CONTROLS: Control[] = [
  { name: "type", label: "Content type", kind: "text", def: "", placeholder: "all types" },
];

/**
 * The content registry: the names designers give the game's ids (weapons, maps, event types) with a
 * category and free metadata. Listed by type (the filter is the URL), upserted by (type, id) as the
 * CLI's import does, deleted one by one. Writes go to POST/DELETE /v1/content with X-Project-Id.
 */
export async function content({ root, projectId }: PageContext): Promise<void> {
  const controls = controlsForm(CONTROLS, () => void load());
  const list = h("div", {});
  const alert = actionAlert();
  const form = h("form", {
    class: "panel edit-form",
    id: "content-form",
    "aria-labelledby": "content-form-h",
  });
  root.append(
    h("h1", {}, "Content registry"),
    controls.form,
    h("section", { class: "panel", "aria-label": "Entries" }, alert.el, list),
    form,
  );

  const f = {
    contentType: field("content", {
      name: "contentType",
      label: "Content type",
      kind: "text",
      required: true,
      placeholder: "weapon",
    }),
    contentId: field("content", {
      name: "contentId",
      label: "Content ID",
      kind: "text",
      required: true,
      placeholder: "wpn_rifle_01",
    }),
    displayName: field("content", {
      name: "displayName",
      label: "Display name",
      kind: "text",
      required: true,
    }),
    category: field("content", { name: "category", label: "Category", kind: "text" }),
    description: field("content", { name: "description", label: "Description", kind: "textarea" }),
    metadata: field("content", {
      name: "metadata",
      label: "Metadata (JSON object)",
      kind: "textarea",
      placeholder: '{"damage": 42}',
      hint: "Optional; at most 10 KB.",
    }),
  };
  form.append(
    h("h2", { id: "content-form-h" }, "Add or update an entry"),
    h("p", { class: "muted" }, "An entry with the same type and ID is replaced."),
    h(
      "div",
      { class: "field-grid" },
      Object.values(f).map((x) => x.wrap),
    ),
    h("p", {}, h("button", { type: "submit" }, "Save entry")),
  );
  onSubmit(form, async () => {
    const raw = f.metadata.input.value.trim();
    let metadata: unknown = null;
    if (raw !== "") {
      try {
        metadata = JSON.parse(raw);
      } catch {
        throw new Error("Metadata: not valid JSON.");
      }
    }
    const entry = {
      contentType: f.contentType.input.value.trim(),
      contentId: f.contentId.input.value.trim(),
      displayName: f.displayName.input.value.trim(),
      category: textOrNull(f.category.input),
      description: textOrNull(f.description.input),
      // Whatever JSON was typed: the API says when it is not an object.
      metadata: metadata as Schemas["ContentEntryInput"]["metadata"],
    };
    await api.POST("/v1/content", {
      params: { header: { "x-project-id": projectId } },
      body: { entries: [entry] },
    });
    form.reset();
    await load();
    return `Saved ${entry.contentType} / ${entry.contentId}.`;
  });

  function edit(e: Entry): void {
    f.contentType.input.value = e.contentType;
    f.contentId.input.value = e.contentId;
    f.displayName.input.value = e.displayName;
    f.category.input.value = e.category ?? "";
    f.description.input.value = e.description ?? "";
    f.metadata.input.value = e.metadata ? JSON.stringify(e.metadata, null, 2) : "";
    f.displayName.input.focus();
  }

  function load(): Promise<void> {
    const type = controls.state.type || undefined;
    alert.hide();
    return withStates(
      list,
      () =>
        dataOf(
          api.GET("/v1/projects/{id}/content", { params: { path: { id: projectId }, query: { type } } }),
        ),
      (entries) => {
        list.append(
          dataTable(
            "content",
            [
              { label: "Type", cell: (e) => e.contentType },
              { label: "Content ID", cell: (e) => h("code", {}, e.contentId) },
              { label: "Display name", cell: (e) => e.displayName },
              { label: "Category", cell: (e) => e.category ?? "—" },
              { label: "Description", cell: (e) => e.description ?? "—" },
              {
                label: "Metadata",
                cell: (e) => (e.metadata ? h("code", {}, JSON.stringify(e.metadata)) : "—"),
              },
              { label: "Updated", cell: (e) => when(e.updatedAt) },
              {
                label: "Actions",
                cell: (e) =>
                  h(
                    "span",
                    { class: "actions" },
                    h(
                      "button",
                      {
                        type: "button",
                        "aria-label": `Edit ${e.contentType} ${e.contentId}`,
                        onclick: () => edit(e),
                      },
                      "Edit",
                    ),
                    rowAction(
                      "Delete",
                      `Delete ${e.contentType} ${e.contentId}`,
                      async () => {
                        await api.DELETE("/v1/content", {
                          params: { header: { "x-project-id": projectId }, query: { id: e.id } },
                        });
                        await load();
                      },
                      alert.show,
                      `Delete the entry ${e.contentType} / ${e.contentId}?`,
                    ),
                  ),
              },
            ],
            entries,
          ),
        );
      },
      {
        isEmpty: (entries) => entries.length === 0,
        emptyMessage: type
          ? `No entries of type “${type}”.`
          : "The registry is empty. Add entries below, or import them with the CLI.",
      },
    );
  }

  await load();
}
