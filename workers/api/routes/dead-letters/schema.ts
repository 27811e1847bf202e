import { z } from "@hono/zod-openapi";

export const DeadLetterSchema = z
  .object({
    key: z.string().describe("R2 object key"),
    size: z.number().int().describe("Bytes of the parked queue message"),
    batchKey: z.string(),
    parkedAt: z.iso.datetime().nullable(),
    attempts: z.number().int().nullable().describe("Delivery attempts before it was dead-lettered"),
    reason: z
      .string()
      .nullable()
      .describe(
        "Why it was parked, as the dead-letter consumer read it (null for batches parked before reasons were kept)",
      ),
  })
  .openapi("DeadLetter");

export const ReplaySchema = z
  .object({
    replayed: z.number().int().describe("Batches sent back to the events queue by this call"),
    remaining: z.boolean().describe("Whether more parked batches are left for another call"),
  })
  .openapi("DeadLetterReplay");
