import { maps, thresholdProfiles } from "../../schema/pg/schema.js";
import { withDb } from "./harness.js";

// Maps and profiles belong to another route group than most tests; tests write their rows directly.

type MapInit = Partial<typeof maps.$inferInsert>;
type ProfileInit = Partial<typeof thresholdProfiles.$inferInsert>;

function idOf(row: { id: string } | undefined): string {
  if (!row) {
    throw new Error("insert returned no row");
  }
  return row.id;
}

/** A map row (512×512 image over [-500, 500]² unless `init` says otherwise); its internal id. */
export function insertMap(projectId: string, mapId: string, init: MapInit = {}): Promise<string> {
  return withDb(async (db) => {
    const [row] = await db
      .insert(maps)
      .values({
        projectId,
        mapId,
        name: `Map ${mapId}`,
        imageKey: `maps/${projectId}/${mapId}`,
        imageContentType: "image/png",
        imageWidth: 512,
        imageHeight: 512,
        worldMinX: -500,
        worldMinY: -500,
        worldMaxX: 500,
        worldMaxY: 500,
        ...init,
      })
      .returning({ id: maps.id });
    return idOf(row);
  });
}

export function insertProfile(projectId: string, init: ProfileInit): Promise<string> {
  return withDb(async (db) => {
    const [row] = await db
      .insert(thresholdProfiles)
      .values({ projectId, name: "profile", ...init })
      .returning({ id: thresholdProfiles.id });
    return idOf(row);
  });
}
