import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { and, eq, sql } from "drizzle-orm";
import { maps } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import { auditResource } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { boundedForm } from "../../middleware/body-limits.js";
import { ProjectHeader } from "../../middleware/project-header.js";
import { errorResponses, policy, problemDoc, rateLimitHeaderDocs } from "../../openapi.js";
import { inspectImage } from "./image-header.js";
import {
  discardImage,
  imageKey,
  MAX_IMAGE_BYTES,
  MAX_UPLOAD_BYTES,
  MapUploadResultSchema,
  MapUploadSchema,
} from "./schema.js";

export const route = createRoute({
  method: "post",
  path: "/v1/maps/upload",
  operationId: "uploadMap",
  tags: ["Maps"],
  summary: "Create or replace a map and its image",
  description:
    "Upsert by the user `mapId` within the project named by X-Project-Id. The image's type and size are " +
    "read from its bytes; the optional imageWidth and imageHeight must equal that size. An update " +
    "replaces every field: omitted vertical bounds become null. The answer is flat (not enveloped): " +
    "`success`, `mapId` (the user identifier, as sent), `action`, and `id`, the internal id.",
  ...policy({ scope: "resources:write", project: "header" }, boundedForm(MAX_UPLOAD_BYTES)),
  request: {
    headers: ProjectHeader,
    body: { required: true, content: { "multipart/form-data": { schema: MapUploadSchema } } },
  },
  responses: {
    200: {
      description: "The map was created or updated.",
      headers: rateLimitHeaderDocs,
      content: { "application/json": { schema: MapUploadResultSchema } },
    },
    ...errorResponses,
    413: problemDoc(`The body exceeds ${MAX_UPLOAD_BYTES} bytes or the image ${MAX_IMAGE_BYTES} bytes.`),
    415: problemDoc("The body is not multipart/form-data."),
  },
});

const imageError = (code: "BAD_REQUEST" | "PAYLOAD_TOO_LARGE", rule: string) =>
  new ApiError(code, `form.image: ${rule}`, { extensions: { field: "form.image" } });

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { image, ...fields } = c.req.valid("form");
    if (image.size > MAX_IMAGE_BYTES) {
      throw imageError("PAYLOAD_TOO_LARGE", `at most ${MAX_IMAGE_BYTES} bytes`);
    }
    const bytes = new Uint8Array(await image.arrayBuffer());
    const info = inspectImage(bytes);
    if ("problem" in info) {
      throw imageError("BAD_REQUEST", info.problem);
    }
    for (const [field, given, actual] of [
      ["imageWidth", fields.imageWidth, info.width],
      ["imageHeight", fields.imageHeight, info.height],
    ] as const) {
      if (given !== undefined && given !== actual) {
        throw new ApiError(
          "BAD_REQUEST",
          `form.${field}: must equal the image's own size (${actual}), not ${given}`,
          {
            extensions: { field: `form.${field}` },
          },
        );
      }
    }
    const project = c.get("project");
    const projectId = project.id;
    const record = {
      name: fields.name,
      imageContentType: info.contentType,
      imageWidth: info.width,
      imageHeight: info.height,
      worldMinX: fields.worldMinX,
      worldMinY: fields.worldMinY,
      worldMaxX: fields.worldMaxX,
      worldMaxY: fields.worldMaxY,
      worldMinZ: fields.worldMinZ ?? null,
      worldMaxZ: fields.worldMaxZ ?? null,
      imageKey: imageKey(projectId),
    };
    // The bytes go first, so a record never points at a missing object.
    await c.env.MAPS.put(record.imageKey, bytes, { httpMetadata: { contentType: info.contentType } });
    let outcome: { id: string; action: "created" | "updated"; replacedKey: string | null };
    try {
      outcome = await c.get("db").transaction(async (tx) => {
        const [created] = await tx
          .insert(maps)
          .values({ ...record, projectId, mapId: fields.mapId })
          .onConflictDoNothing({ target: [maps.projectId, maps.mapId] })
          .returning({ id: maps.id });
        const entry = (id: string, action: "map.created" | "map.updated") =>
          auditResource(c, project, action, { id, name: fields.name }, tx, { mapId: fields.mapId });
        if (created) {
          await entry(created.id, "map.created");
          return { id: created.id, action: "created" as const, replacedKey: null };
        }
        // The conflicting row is committed by now; lock it to learn which image it replaces.
        const [existing] = await tx
          .select({ id: maps.id, imageKey: maps.imageKey })
          .from(maps)
          .where(and(eq(maps.projectId, projectId), eq(maps.mapId, fields.mapId)))
          .for("update");
        if (!existing) {
          throw new ApiError("CONFLICT", "form.mapId: the map was deleted during this upload; retry it", {
            extensions: { field: "form.mapId" },
          });
        }
        await tx
          .update(maps)
          .set({ ...record, updatedAt: sql`now()` })
          .where(eq(maps.id, existing.id));
        await entry(existing.id, "map.updated");
        return { id: existing.id, action: "updated" as const, replacedKey: existing.imageKey };
      });
    } catch (err) {
      await discardImage(c.env.MAPS, record.imageKey);
      throw err;
    }
    if (outcome.replacedKey) {
      await discardImage(c.env.MAPS, outcome.replacedKey);
    }
    return c.json(
      { success: true as const, mapId: fields.mapId, id: outcome.id, action: outcome.action },
      200,
    );
  });
}
