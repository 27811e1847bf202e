import { describe, expect, it } from "vitest";
import { api } from "../support/http.js";

type Operation = {
  parameters?: Array<{ name: string; in: string; required?: boolean }>;
  requestBody?: { required?: boolean; content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, unknown> }>;
  security?: unknown[];
};

describe("OpenAPI document: resources", () => {
  it("describes every resource route, the X-Project-Id header and the multipart upload", async () => {
    const doc = (await (await api("/v1/openapi.json")).json()) as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }> };
    };
    const expected: Record<string, string[]> = {
      "/v1/projects/{id}/threshold-profiles": ["get", "post"],
      "/v1/projects/{id}/threshold-profiles/{profileId}": ["patch", "delete"],
      "/v1/projects/{id}/maps": ["get"],
      "/v1/projects/{id}/maps/{map}": ["delete"],
      "/v1/projects/{id}/maps/{mapInternalId}/image": ["get"],
      "/v1/maps/upload": ["post"],
      "/v1/projects/{id}/content": ["get"],
      "/v1/content": ["get", "post", "delete"],
    };
    for (const [path, methods] of Object.entries(expected)) {
      expect(Object.keys(doc.paths[path] ?? {}).sort(), path).toEqual([...methods].sort());
    }
    for (const op of [
      doc.paths["/v1/content"]?.get,
      doc.paths["/v1/content"]?.post,
      doc.paths["/v1/content"]?.delete,
      doc.paths["/v1/maps/upload"]?.post,
    ]) {
      expect(op?.parameters).toContainEqual(
        expect.objectContaining({ name: "x-project-id", in: "header", required: true }),
      );
    }
    const upload = doc.paths["/v1/maps/upload"]?.post;
    expect(upload?.requestBody?.required).toBe(true);
    expect(Object.keys(upload?.requestBody?.content ?? {})).toEqual(["multipart/form-data"]);
    expect(Object.keys(upload?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "400", "413", "415"]),
    );
    const image = doc.paths["/v1/projects/{id}/maps/{mapInternalId}/image"]?.get;
    expect(Object.keys(image?.responses["200"]?.content ?? {}).sort()).toEqual([
      "image/jpeg",
      "image/png",
      "image/webp",
    ]);
    expect(doc.components.schemas.ThresholdProfile?.required?.length).toBe(19);
    expect(doc.components.schemas.Map?.required?.length).toBe(14);
    expect(doc.components.schemas.ContentEntry?.required?.length).toBe(10);
  });
});
