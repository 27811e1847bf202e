import { z } from "@hono/zod-openapi";

export const DeadLetterSchema = z
  .object({
    key: z.string().describe("R2 object key"),
    size: z.number().int().describe("Bytes of the parked queue message"),
    batchKey: z.string(),
    parkedAt: z.iso.datetime().nullable(),
    attempts: z.number().int().nullable().describe("Delivery attempts before it was dead-lettered"),
  })
  .openapi("DeadLetter");

export const ReplaySchema = z
  .object({
    replayed: z.number().int().describe("Batches sent back to the events queue by this call"),
    remaining: z.boolean().describe("Whether more parked batches are left for another call"),
  })
  .openapi("DeadLetterReplay");

/** Parked batches of one project; the key layout is set by workers/ingest/consumer/dead-letters.ts. */
export function projectPrefix(projectId: string): string {
  return `events/${projectId}/`;
}

export function batchKeyOf(objectKey: string): string {
  const file = objectKey.slice(objectKey.lastIndexOf("/") + 1);
  return file.slice(0, file.indexOf("-"));
}
