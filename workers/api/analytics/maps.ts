import { and, eq } from "drizzle-orm";
import { maps } from "../../../schema/pg/schema.js";
import type { Db } from "../db.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The user map id that events carry, for a `mapId` parameter that is either that id or the internal
 * UUID of one of the project's maps (the MCP server and editors pass either). Only a UUID-shaped
 * value costs a lookup; a UUID that is no map of this project is taken as a user map id, since a
 * game may name its maps by UUIDs too.
 */
export async function eventMapId(db: Db, projectId: string, mapId: string): Promise<string> {
  if (!UUID.test(mapId)) {
    return mapId;
  }
  const [row] = await db
    .select({ mapId: maps.mapId })
    .from(maps)
    .where(and(eq(maps.projectId, projectId), eq(maps.id, mapId.toLowerCase())));
  return row?.mapId ?? mapId;
}
