import { z } from "@hono/zod-openapi";
import type { ContentEntryRow } from "../../../../schema/pg/schema.js";
import { isoTimestamps, isStorable, text } from "../../fields.js";

export const MAX_ENTRIES = 500;
export const METADATA_MAX_BYTES = 10_240;

export const ContentEntrySchema = z
  .object({
    id: z.uuid(),
    projectId: z.uuid(),
    contentType: z.string().describe("Type category, e.g. weapon, map, event_type"),
    contentId: z.string().describe("Unique within the content type"),
    displayName: z.string(),
    description: z.string().nullable(),
    category: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("ContentEntry");

/** Why metadata cannot be stored as given, or null: the serialized size, and strings jsonb would refuse. */
function metadataProblem(value: Record<string, unknown>): string | null {
  let unstorable = false;
  const json = JSON.stringify(value, (key, v) => {
    if (!isStorable(key) || (typeof v === "string" && !isStorable(v))) {
      unstorable = true;
    }
    return v;
  });
  if (unstorable) {
    return "strings and keys must be valid Unicode without U+0000";
  }
  const bytes = new TextEncoder().encode(json).byteLength;
  return bytes > METADATA_MAX_BYTES
    ? `must be at most ${METADATA_MAX_BYTES} bytes as UTF-8 JSON (is ${bytes})`
    : null;
}

const metadata = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    const problem = metadataProblem(value);
    if (problem) {
      ctx.addIssue({ code: "custom", message: problem });
    }
  })
  .nullable()
  .optional()
  .describe(`A JSON object, at most ${METADATA_MAX_BYTES} bytes serialized as compact UTF-8 JSON`);

export const ContentEntryInputSchema = z
  .strictObject({
    contentType: text(100),
    contentId: text(255),
    displayName: text(255),
    description: text(2000, { allowEmpty: true }).nullable().optional(),
    category: text(255, { allowEmpty: true }).nullable().optional(),
    metadata,
  })
  .describe("Lengths count characters (Unicode code points). Omitted optional fields are stored as null.")
  .openapi("ContentEntryInput");

export const ContentImportSchema = z
  .strictObject({ entries: z.array(ContentEntryInputSchema).max(MAX_ENTRIES) })
  .openapi("ContentImport");

export const ImportedSchema = z
  .object({
    imported: z.number().int().describe("Entries written after de-duplication by (contentType, contentId)"),
  })
  .openapi("ContentImported");

export const TypeQuery = z.object({
  type: text(100)
    .optional()
    .openapi({ param: { name: "type", in: "query" }, description: "Only entries of this content type" }),
});

const FORMS = "give id, or contentType and contentId";

/** One entry, by id or by its uniqueness key; the refinement names what is missing or extra. */
export const DeleteContentQuery = z
  .object({
    id: z
      .uuid()
      .optional()
      .openapi({
        param: { name: "id", in: "query" },
        description: "The entry's UUID; alone, without contentType and contentId",
      }),
    contentType: text(100)
      .optional()
      .openapi({
        param: { name: "contentType", in: "query" },
        description: "With contentId, instead of id",
      }),
    contentId: text(255)
      .optional()
      .openapi({
        param: { name: "contentId", in: "query" },
        description: "With contentType, instead of id",
      }),
  })
  .superRefine((q, ctx) => {
    const pair = q.contentType !== undefined || q.contentId !== undefined;
    if (q.id !== undefined && pair) {
      ctx.addIssue({ code: "custom", path: [], message: `${FORMS}, not both` });
    } else if (q.id === undefined && !pair) {
      ctx.addIssue({ code: "custom", path: [], message: `required: ${FORMS}` });
    } else if (q.id === undefined && q.contentType === undefined) {
      ctx.addIssue({ code: "custom", path: ["contentType"], message: "required with contentId" });
    } else if (q.id === undefined && q.contentId === undefined) {
      ctx.addIssue({ code: "custom", path: ["contentId"], message: "required with contentType" });
    }
  });

export const DeletedContentSchema = z
  .object({ id: z.uuid(), contentType: z.string(), contentId: z.string() })
  .openapi("DeletedContentEntry");

export function contentItem(row: ContentEntryRow): z.infer<typeof ContentEntrySchema> {
  return {
    id: row.id,
    projectId: row.projectId,
    contentType: row.contentType,
    contentId: row.contentId,
    displayName: row.displayName,
    description: row.description,
    category: row.category,
    metadata: row.metadata,
    ...isoTimestamps(row),
  };
}
