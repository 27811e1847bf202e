import { api, dataOf, type Schemas } from "../api.js";
import { fmt, h } from "../dom.js";
import { actionAlert, field, onSubmit, rowAction } from "../edit-form.js";
import type { PageContext } from "../page.js";
import { withStates } from "../states.js";
import { dataTable, when } from "../table.js";

/**
 * Maps: the level images the heatmap draws on, each with the world rectangle it shows. Upload (a new
 * map ID creates, an existing one replaces image and bounds, as the CLI's upload does), list with a
 * thumbnail and a link to its heatmap, delete. The upload is POST /v1/maps/upload, multipart.
 */
export async function maps({ root, projectId }: PageContext): Promise<void> {
  const list = h("div", {});
  const alert = actionAlert();
  const form = h("form", { class: "panel edit-form", id: "map-form", "aria-labelledby": "map-form-h" });
  root.append(
    h("h1", {}, "Maps"),
    h("section", { class: "panel", "aria-label": "Maps" }, alert.el, list),
    form,
  );

  const f = {
    image: field("map", {
      name: "image",
      label: "Image",
      kind: "file",
      required: true,
      accept: "image/png,image/jpeg,image/webp",
      hint: "PNG, JPEG or WebP, at most 10 MB: a top-down view with north at the top.",
    }),
    mapId: field("map", {
      name: "mapId",
      label: "Map ID",
      kind: "text",
      required: true,
      placeholder: "harbor",
      hint: "As the game sends it in map_id; an existing map ID is replaced.",
    }),
    name: field("map", { name: "name", label: "Name", kind: "text", required: true, placeholder: "Harbor" }),
  };
  const bound = (name: string, label: string, required = true) =>
    field("map", { name, label, kind: "number", step: "any", required });
  const bounds = {
    worldMinX: bound("worldMinX", "World min X"),
    worldMaxX: bound("worldMaxX", "World max X"),
    worldMinY: bound("worldMinY", "World min Y"),
    worldMaxY: bound("worldMaxY", "World max Y"),
    worldMinZ: bound("worldMinZ", "World min Z (optional)", false),
    worldMaxZ: bound("worldMaxZ", "World max Z (optional)", false),
  };
  form.append(
    h("h2", { id: "map-form-h" }, "Upload a map"),
    h(
      "div",
      { class: "field-grid" },
      Object.values(f).map((x) => x.wrap),
    ),
    h(
      "fieldset",
      {},
      h("legend", {}, "World bounds: the game-world rectangle the image covers (x to the right, y up)"),
      h(
        "div",
        { class: "field-grid" },
        Object.values(bounds).map((x) => x.wrap),
      ),
    ),
    h("p", {}, h("button", { type: "submit" }, "Upload map")),
  );

  onSubmit(form, async () => {
    const body = new FormData();
    const file = f.image.input instanceof HTMLInputElement ? f.image.input.files?.[0] : undefined;
    if (file) {
      body.set("image", file);
    }
    body.set("mapId", f.mapId.input.value.trim());
    body.set("name", f.name.input.value.trim());
    for (const [k, b] of Object.entries(bounds)) {
      // Only what was typed: the API reads decimal text and says which bound is wrong.
      if (b.input.value.trim() !== "") {
        body.set(k, b.input.value.trim());
      }
    }
    // The upload answers flat ({success, mapId, id, action}), so there is no `data` to read here.
    // The form's own fields as multipart/form-data (what was left blank is left out, so the API names it).
    await api.POST("/v1/maps/upload", {
      params: { header: { "x-project-id": projectId } },
      body: body as unknown as Schemas["MapUpload"],
    });
    const mapId = String(body.get("mapId"));
    form.reset();
    await load();
    return `Map “${mapId}” uploaded.`;
  });

  function load(): Promise<void> {
    alert.hide();
    return withStates(
      list,
      () => dataOf(api.GET("/v1/projects/{id}/maps", { params: { path: { id: projectId } } })),
      (rows) => {
        list.append(
          dataTable(
            "maps",
            [
              {
                label: "Image",
                cell: (m) =>
                  h("img", {
                    src: m.imageUrl,
                    alt: `${m.name} map image`,
                    width: 96,
                    height: Math.max(1, Math.round((96 * m.imageHeight) / m.imageWidth)),
                    loading: "lazy",
                  }),
              },
              {
                label: "Name",
                cell: (m) =>
                  h(
                    "a",
                    { href: `/projects/${projectId}/heatmap?map=${encodeURIComponent(m.mapId)}` },
                    m.name,
                  ),
              },
              { label: "Map ID", cell: (m) => h("code", {}, m.mapId) },
              { label: "World X", cell: (m) => `${fmt(m.worldMinX)} … ${fmt(m.worldMaxX)}` },
              { label: "World Y", cell: (m) => `${fmt(m.worldMinY)} … ${fmt(m.worldMaxY)}` },
              {
                label: "World Z",
                cell: (m) =>
                  m.worldMinZ === null || m.worldMaxZ === null
                    ? "—"
                    : `${fmt(m.worldMinZ)} … ${fmt(m.worldMaxZ)}`,
              },
              { label: "Image size", cell: (m) => `${m.imageWidth} × ${m.imageHeight} px` },
              { label: "Updated", cell: (m) => when(m.updatedAt) },
              {
                label: "Actions",
                cell: (m) =>
                  rowAction(
                    "Delete",
                    `Delete ${m.name}`,
                    async () => {
                      await api.DELETE("/v1/projects/{id}/maps/{map}", {
                        params: { path: { id: projectId, map: m.id } },
                      });
                      await load();
                    },
                    alert.show,
                    `Delete the map “${m.name}” and its image? Its events are kept.`,
                  ),
              },
            ],
            rows,
          ),
        );
      },
      {
        isEmpty: (rows) => rows.length === 0,
        emptyMessage: "No maps yet. Upload a level image with its world bounds below to draw heatmaps on it.",
      },
    );
  }

  await load();
}
