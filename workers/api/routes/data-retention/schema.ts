import { z } from "@hono/zod-openapi";
import { dateOf } from "../../window.js";

export const DataRetentionSchema = z
  .object({
    days: z
      .number()
      .int()
      .describe(
        "UTC calendar days of raw events the studio keeps now, today included: the plan's, or the shorter number an owner chose",
      ),
    planDays: z.number().int().describe("The plan's retention: the most an owner may choose"),
    chosenDays: z
      .number()
      .int()
      .nullable()
      .describe(
        "The owner's choice; null: the plan's. A choice above the plan's (after a downgrade) keeps the plan's",
      ),
    retainedFrom: z.iso
      .date()
      .describe(
        "The oldest UTC day kept: no read returns an event (or a row derived from one) dated before it; a daily purge deletes them",
      ),
  })
  .openapi("DataRetention");

export const DataRetentionUpdateSchema = z
  .object({
    retentionDays: z.number().int().min(1).nullable().openapi({
      description:
        "Days to keep, 1 to the plan's retention; null goes back to the plan's. Rows older than a shortened retention disappear from every read at once and are deleted within a day; lengthening it again does not bring them back.",
      example: 30,
    }),
  })
  .strict()
  .openapi("DataRetentionUpdate");

export function retentionItem(r: {
  days: number;
  planDays: number;
  chosenDays: number | null;
  fromMs: number;
}) {
  return { days: r.days, planDays: r.planDays, chosenDays: r.chosenDays, retainedFrom: dateOf(r.fromMs) };
}
