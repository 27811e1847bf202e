import { createRoute, type OpenAPIHono, type z } from "@hono/zod-openapi";
import { sql } from "drizzle-orm";
import { contentEntries } from "../../../../schema/pg/schema.js";
import type { AppEnv } from "../../context.js";
import { bodyUpTo } from "../../middleware/body-limits.js";
import { ProjectHeader } from "../../middleware/project-header.js";
import { envelope, errorResponses, policy, problemDoc } from "../../openapi.js";
import { type ContentEntryInputSchema, ContentImportSchema, ImportedSchema, MAX_ENTRIES } from "./schema.js";

/**
 * 500 entries at their bounds, as plain UTF-8 JSON, stay under 12 MB; the cap keeps a body that could
 * never validate from being buffered whole. A request escaping every character may need splitting.
 */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export const route = createRoute({
  method: "post",
  path: "/v1/content",
  operationId: "importContent",
  tags: ["Content"],
  summary: "Create or update content entries in bulk",
  description:
    `At most ${MAX_ENTRIES} entries. Entries are keyed by (contentType, contentId): an existing entry is ` +
    "replaced (omitted optional fields become null; createdAt is kept), and of duplicates within one " +
    "request the last wins. One statement: a rejected request changes nothing.",
  ...policy({ scope: "resources:write", project: "header" }, bodyUpTo(MAX_BODY_BYTES)),
  request: {
    headers: ProjectHeader,
    body: { required: true, content: { "application/json": { schema: ContentImportSchema } } },
  },
  responses: {
    200: envelope(ImportedSchema, "How many entries were written."),
    ...errorResponses,
    413: problemDoc(`The body exceeds ${MAX_BODY_BYTES} bytes.`),
  },
});

type EntryInput = z.infer<typeof ContentEntryInputSchema>;

/** Last one wins; NUL cannot occur in either part (validation refuses it), so it separates them. */
function lastOfEachKey(entries: EntryInput[]): EntryInput[] {
  const byKey = new Map<string, EntryInput>();
  for (const e of entries) {
    byKey.set(`${e.contentType}\0${e.contentId}`, e);
  }
  return [...byKey.values()];
}

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    const projectId = c.get("project").id;
    const entries = lastOfEachKey(c.req.valid("json").entries);
    if (entries.length > 0) {
      // One INSERT: Postgres applies all of it or none of it.
      await c
        .get("db")
        .insert(contentEntries)
        .values(
          entries.map((e) => ({
            projectId,
            contentType: e.contentType,
            contentId: e.contentId,
            displayName: e.displayName,
            description: e.description ?? null,
            category: e.category ?? null,
            metadata: e.metadata ?? null,
          })),
        )
        .onConflictDoUpdate({
          target: [contentEntries.projectId, contentEntries.contentType, contentEntries.contentId],
          set: {
            displayName: sql`excluded.display_name`,
            description: sql`excluded.description`,
            category: sql`excluded.category`,
            metadata: sql`excluded.metadata`,
            updatedAt: sql`now()`,
          },
        });
    }
    return c.json({ success: true as const, data: { imported: entries.length } }, 200);
  });
}
