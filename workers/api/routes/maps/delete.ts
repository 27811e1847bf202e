import { createRoute, type OpenAPIHono, z } from "@hono/zod-openapi";
import { and, eq, type SQL } from "drizzle-orm";
import { maps } from "../../../../schema/pg/schema.js";
import { ApiError } from "../../../shared/errors.js";
import { auditResource } from "../../audit/project.js";
import type { AppEnv } from "../../context.js";
import { envelope, errorResponses, policy, problemDoc } from "../../openapi.js";
import { DeletedMapSchema, discardImage, MapRefParams } from "./schema.js";

export const route = createRoute({
  method: "delete",
  path: "/v1/projects/{id}/maps/{map}",
  operationId: "deleteMap",
  tags: ["Maps"],
  summary: "Delete a map and its image",
  description:
    "By internal id or by user map id (an internal id wins when both could match). 409 while another " +
    "record (an alert rule) still refers to the map with a restricting foreign key; nothing is deleted then.",
  ...policy({ scope: "resources:write", project: "path" }),
  request: { params: MapRefParams },
  responses: {
    200: envelope(DeletedMapSchema, "The internal id of the deleted map."),
    ...errorResponses,
    409: problemDoc("The map is still referenced."),
  },
});

/** Postgres' SQLSTATE of a failed query, wherever the driver and drizzle put it. */
function sqlState(err: unknown): string | undefined {
  for (let e = err; e && typeof e === "object"; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") {
      return code;
    }
  }
  return undefined;
}

const FOREIGN_KEY_VIOLATION = "23503";

const isUuid = (s: string) => z.uuid().safeParse(s).success;

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const { map } = c.req.valid("param");
    const project = c.get("project");
    const remove = async (which: SQL) => {
      try {
        return await c.get("db").transaction(async (tx) => {
          const [row] = await tx
            .delete(maps)
            .where(and(eq(maps.projectId, project.id), which))
            .returning({ id: maps.id, imageKey: maps.imageKey, mapId: maps.mapId, name: maps.name });
          if (row) {
            await auditResource(c, project, "map.deleted", row, tx, { mapId: row.mapId });
          }
          return row;
        });
      } catch (err) {
        if (sqlState(err) === FOREIGN_KEY_VIOLATION) {
          throw new ApiError("CONFLICT", "map: the map is still used by alert rules", {
            extensions: { field: "param.map" },
          });
        }
        throw err;
      }
    };
    // The internal id first: a user map id that happens to look like another map's UUID must not
    // take that map with it. Each statement deletes at most one row (both ids are unique per project).
    const deleted =
      (isUuid(map) ? await remove(eq(maps.id, map)) : undefined) ?? (await remove(eq(maps.mapId, map)));
    if (!deleted) {
      throw new ApiError("NOT_FOUND", "Map not found.");
    }
    // After the record: a failure here leaves an unreachable object, never a map without its image.
    await discardImage(c.env.MAPS, deleted.imageKey);
    return c.json({ success: true as const, data: { id: deleted.id } }, 200);
  });
}
