import { z } from "@hono/zod-openapi";
import { ERASURE_STATUSES } from "../../../../schema/pg/columns.js";
import type { ErasureRow } from "../../../../schema/pg/schema.js";
import { REBUILT_ROLLUPS } from "../../erasure/rollups.js";

export const ErasureBodySchema = z
  .object({
    playerId: z
      .string()
      .min(1)
      .max(128)
      .describe("The player: an event's player_id, or its session_id for events without one"),
  })
  .openapi("ErasureRequest");

export const ErasureSchema = z
  .object({
    id: z.uuid(),
    projectId: z.uuid(),
    playerIdSha256: z.string().describe("SHA-256 (hex) of the erased playerId; the id itself is not kept"),
    requestedBy: z.object({ keyId: z.uuid().nullable() }).describe("The API key that asked"),
    status: z.enum(ERASURE_STATUSES),
    rowsRemoved: z
      .number()
      .int()
      .describe(
        "Events removed, counted before and after each delete; `steps` gives every table, rollups included",
      ),
    steps: z.array(z.object({ table: z.string(), rowsRemoved: z.number().int() })),
    rebuiltTables: z
      .array(z.string())
      .describe(
        "The tables of `steps` that are rollups rebuilt without the player for their days: their rowsRemoved are the rows replaced",
      ),
    error: z
      .string()
      .nullable()
      .describe(
        "Why it failed; while `running`, the reason the last attempt stopped (the queue retries it from where it stopped)",
      ),
    createdAt: z.iso.datetime(),
    completedAt: z.iso.datetime().nullable(),
    startedAt: z.iso
      .datetime()
      .nullable()
      .describe("When the queue's consumer first took it; null while it waits in the queue"),
    attempts: z.number().int().describe("Deliveries of the erasure's message that ran it so far"),
  })
  .openapi("Erasure");

export const ErasurePreviewSchema = z
  .object({
    tables: z
      .array(z.object({ table: z.string(), rows: z.number().int() }))
      .describe("The player's rows now, per table the erasure deletes from (events first)"),
    rebuilt: z
      .array(z.string())
      .describe("Rollups without a player key, rebuilt without the player for the player's days"),
    days: z.number().int().describe("UTC days the player has events on (the days rebuilt)"),
  })
  .openapi("ErasurePreview");

export const ErasureIdParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, description: "Project UUID" }),
  erasureId: z.uuid().openapi({ param: { name: "erasureId", in: "path" } }),
});

export function erasureItem(row: ErasureRow): z.infer<typeof ErasureSchema> {
  return {
    id: row.id,
    projectId: row.projectId,
    playerIdSha256: row.playerIdSha256,
    requestedBy: { keyId: row.requestedBy },
    status: row.status,
    rowsRemoved: row.rowsRemoved,
    steps: row.steps,
    rebuiltTables: [...REBUILT_ROLLUPS],
    error: row.error,
    createdAt: row.createdAt.toISOString(),
    completedAt: row.completedAt?.toISOString() ?? null,
    startedAt: row.startedAt?.toISOString() ?? null,
    attempts: row.attempts,
  };
}
