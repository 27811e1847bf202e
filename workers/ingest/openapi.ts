import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../api/context.js";
import { errorResponses, rateLimitHeaderDocs, securityFor } from "../api/openapi.js";
import { MAX_BODY_BYTES } from "./handler.js";

const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } },
});

/**
 * Ingest is served outside the Hono app (it is the hot path), but SDK authors read the same OpenAPI
 * document, so its contract is registered here by hand.
 */
export function registerIngestDoc(app: OpenAPIHono<AppEnv>): void {
  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/v1/events",
    operationId: "ingestEvents",
    tags: ["Ingest"],
    summary: "Ingest a protobuf TelemetryBatch",
    description:
      "Body: a `telemetry.v1.TelemetryBatch` (proto/telemetry/v1/telemetry.proto), optionally gzip'd, at most " +
      `${MAX_BODY_BYTES} bytes as sent and 8 MiB decompressed. A batch with any invalid event is rejected whole; ` +
      "the problem names the first offending event index and field. 202 only once the batch is queued.",
    security: securityFor("events:write"),
    request: {
      headers: z.object({
        "Content-Type": z.literal("application/x-protobuf"),
        "Content-Encoding": z.literal("gzip").optional(),
        "Content-Length": z.number().int().max(MAX_BODY_BYTES),
        "X-SDK-Version": z.string().min(1).max(64),
        "X-API-Key": z.string().describe("A key with scope events:write"),
      }),
      body: {
        required: true,
        content: { "application/x-protobuf": { schema: { type: "string", format: "binary" } } },
      },
    },
    responses: {
      202: {
        description: "Accepted for processing.",
        headers: rateLimitHeaderDocs,
        content: {
          "application/json": {
            schema: { type: "object", properties: { status: { type: "string", enum: ["accepted"] } } },
          },
        },
      },
      ...errorResponses,
      411: problem("Content-Length missing."),
      413: problem("Body over 126,000 bytes as sent, or over 8 MiB decompressed."),
      415: problem("Content-Type other than application/x-protobuf, or Content-Encoding other than gzip."),
      503: problem("The queue did not accept the batch; retry after Retry-After seconds."),
    },
  });
}
