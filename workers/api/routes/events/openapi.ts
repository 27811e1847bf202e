import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { LIMITS, MiB } from "../../../shared/telemetry/limits.js";
import type { AppEnv } from "../../context.js";
import { errorResponses, rateLimitHeaderDocs, securityFor } from "../../openapi.js";

const MAX_BODY_BYTES = LIMITS.maxCompressedBytes;
const INFLATED = `${LIMITS.maxDecompressedBytes / MiB} MiB`;

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
      `${MAX_BODY_BYTES} bytes as sent and ${INFLATED} decompressed. A batch with any invalid event is rejected whole; ` +
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
      413: problem(
        `Body over ${MAX_BODY_BYTES.toLocaleString("en-US")} bytes as sent, or over ${INFLATED} decompressed.`,
      ),
      415: problem("Content-Type other than application/x-protobuf, or Content-Encoding other than gzip."),
      503: problem("The queue did not accept the batch; retry after Retry-After seconds."),
    },
  });
}
