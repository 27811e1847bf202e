import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DOCUMENT_FILE, TYPES_FILE, typesFor } from "../../scripts/generate-api.js";

// The second link of the chain: test/workers/openapi-snapshot.test.ts holds the committed document to
// the served one; this holds the dashboard's types to what openapi-typescript makes of that document.
describe("generated dashboard API types", () => {
  it("are what openapi-typescript generates from the committed document (run `npm run generate:api` if this fails)", async () => {
    const fresh = await typesFor(readFileSync(DOCUMENT_FILE, "utf8"));
    expect(readFileSync(TYPES_FILE, "utf8")).toBe(fresh);
  });

  it("change when the document does: a field turning nullable reaches the types", async () => {
    const doc = JSON.parse(readFileSync(DOCUMENT_FILE, "utf8"));
    const build = doc.components.schemas.Build;
    expect(build.properties.first_seen).toEqual({ type: "string" });
    build.properties.first_seen = { type: ["string", "null"] };
    const changed = await typesFor(JSON.stringify(doc));
    expect(changed).not.toBe(readFileSync(TYPES_FILE, "utf8"));
    expect(changed).toMatch(/Build: \{\n\s+build_id: string;\n\s+first_seen: string \| null;/);
  });
});
