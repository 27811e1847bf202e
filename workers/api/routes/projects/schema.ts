import { z } from "@hono/zod-openapi";
import type { ProjectRow } from "../../../../schema/pg/schema.js";
import { DataRetentionSchema } from "../data-retention/schema.js";

export const ProjectSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    tenantId: z.uuid(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("Project");

export const ProjectStatusSchema = z
  .object({
    project: ProjectSchema,
    kpis: z.object({
      events24h: z.number().int().describe("Events with a timestamp in the 24 hours up to fetchedAt"),
      players24h: z
        .number()
        .int()
        .describe("Unique players (player_id, else session_id) in the 24 hours up to fetchedAt"),
      totalEvents: z
        .number()
        .int()
        .describe(
          "Events kept: those dated on or after retention.retainedFrom (all older ones have expired)",
        ),
      lastEventAt: z.iso.datetime().nullable().describe("Timestamp of the newest event, or null"),
      fetchedAt: z
        .number()
        .int()
        .describe("Unix time in milliseconds when the event KPIs were computed (cached about 60 s)"),
      activeAlertRules: z.number().int(),
    }),
    retention: DataRetentionSchema,
  })
  .openapi("ProjectStatus");

export function projectItem(row: Pick<ProjectRow, "id" | "name" | "tenantId" | "createdAt" | "updatedAt">) {
  return {
    id: row.id,
    name: row.name,
    tenantId: row.tenantId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
