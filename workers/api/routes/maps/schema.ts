import { z } from "@hono/zod-openapi";
import type { maps } from "../../../../schema/pg/schema.js";
import { DECIMAL, isoTimestamps, text } from "../../fields.js";

export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
/** The image plus room for the other form fields and the multipart framing. */
export const MAX_UPLOAD_BYTES = MAX_IMAGE_BYTES + 64 * 1024;

export const MapSchema = z
  .object({
    id: z.uuid().describe("Internal id"),
    name: z.string(),
    mapId: z.string().describe("User map identifier: the events' map_id and the heatmap's mapId"),
    imageUrl: z.string().describe("Path of the image, served with the same credentials"),
    worldMinX: z.number(),
    worldMinY: z.number(),
    worldMaxX: z.number(),
    worldMaxY: z.number(),
    worldMinZ: z.number().nullable(),
    worldMaxZ: z.number().nullable(),
    imageWidth: z.number().int(),
    imageHeight: z.number().int(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Map");

// Form fields arrive as text; only plain decimal notation is a number here.
const coordinate = z
  .string()
  .regex(DECIMAL, "must be a decimal number")
  .transform(Number)
  .refine(Number.isFinite, "must be a finite number")
  .openapi({
    type: "string",
    example: "-512.5",
    description: "World units, a finite decimal number; each min must be below its max",
  });

// The size the client believes the image has (the CLI's capture metadata sends it); the image's own
// header decides, and a disagreement means the metadata and the file do not belong together.
const dimension = (axis: "width" | "height") =>
  z
    .string()
    .regex(/^[1-9]\d{0,9}$/, "must be a positive whole number of pixels")
    .transform(Number)
    .optional()
    .openapi({
      type: "string",
      example: "1024",
      description: `Optional: the image's ${axis} in pixels; must equal the ${axis} in the image's own header`,
    });

const ImageFile = z
  .custom<File>((v) => v instanceof File, "must be a file part")
  .openapi({ type: "string", format: "binary", description: "PNG, JPEG or WebP, at most 10 MB" });

export const MapUploadSchema = z
  .strictObject({
    image: ImageFile,
    mapId: text(255),
    name: text(255),
    worldMinX: coordinate,
    worldMinY: coordinate,
    worldMaxX: coordinate,
    worldMaxY: coordinate,
    worldMinZ: coordinate.optional(),
    worldMaxZ: coordinate.optional(),
    imageWidth: dimension("width"),
    imageHeight: dimension("height"),
  })
  .superRefine((f, ctx) => {
    const pairs = [
      ["worldMinX", "worldMaxX"],
      ["worldMinY", "worldMaxY"],
      ["worldMinZ", "worldMaxZ"],
    ] as const;
    for (const [lo, hi] of pairs) {
      const a = f[lo];
      const b = f[hi];
      if (a !== undefined && b !== undefined && !(a < b)) {
        ctx.addIssue({ code: "custom", path: [hi], message: `must be greater than ${lo}` });
      }
    }
  })
  .openapi("MapUpload");

export const MapUploadResultSchema = z
  .object({
    success: z.literal(true),
    mapId: z.string().describe("The user map identifier that was uploaded (as sent)"),
    id: z.uuid().describe("Internal id of the map: the one its image URL and DELETE use"),
    action: z.enum(["created", "updated"]),
  })
  .openapi("MapUploadResult");

export const MapParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, description: "Project UUID" }),
  mapInternalId: z
    .uuid()
    .openapi({ param: { name: "mapInternalId", in: "path" }, description: "Internal map id (Map.id)" }),
});

export const MapRefParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, description: "Project UUID" }),
  map: text(255).openapi({
    param: { name: "map", in: "path" },
    description: "The map's internal id (Map.id) or its user map id (Map.mapId), URL-encoded",
  }),
});

export const DeletedMapSchema = z.object({ id: z.uuid() }).openapi("DeletedMap");

export function imageUrl(projectId: string, id: string): string {
  return `/api/v1/projects/${projectId}/maps/${id}/image`;
}

/** A fresh object per upload: the record never points at bytes a concurrent upload is replacing. */
export function imageKey(projectId: string): string {
  return `maps/${projectId}/${crypto.randomUUID()}`;
}

/**
 * Removes an image no record points at any more. Best effort: the record change is already decided, and
 * a failure leaves only an unreachable object behind, so it must not turn a done request into an error.
 */
export async function discardImage(bucket: R2Bucket, key: string): Promise<void> {
  try {
    await bucket.delete(key);
  } catch (err) {
    console.error("map image left behind", key, err instanceof Error ? err.message : String(err));
  }
}

type MapRow = typeof maps.$inferSelect;

export function mapItem(row: MapRow): z.infer<typeof MapSchema> {
  return {
    id: row.id,
    name: row.name,
    mapId: row.mapId,
    imageUrl: imageUrl(row.projectId, row.id),
    worldMinX: row.worldMinX,
    worldMinY: row.worldMinY,
    worldMaxX: row.worldMaxX,
    worldMaxY: row.worldMaxY,
    worldMinZ: row.worldMinZ,
    worldMaxZ: row.worldMaxZ,
    imageWidth: row.imageWidth,
    imageHeight: row.imageHeight,
    ...isoTimestamps(row),
  };
}
