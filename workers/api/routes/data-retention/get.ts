import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../../context.js";
import { readerRetention } from "../../data-retention/horizon.js";
import { readerOf } from "../../middleware/auth.js";
import { envelope, errorResponses, policy } from "../../openapi.js";
import { DataRetentionSchema, retentionItem } from "./schema.js";

export const route = createRoute({
  method: "get",
  path: "/v1/data-retention",
  operationId: "getDataRetention",
  tags: ["Data retention"],
  summary: "The studio's raw-event retention",
  description:
    "How many UTC days of raw events the caller's studio keeps (its plan's, or the shorter number an " +
    "owner chose) and the oldest day kept. Every read (analytics, heatmaps, builds, the query endpoint, " +
    "exports) stops at that day.",
  ...policy({ scope: "analytics:read" }),
  responses: { 200: envelope(DataRetentionSchema, "The studio's retention."), ...errorResponses },
});

export function register(app: OpenAPIHono<AppEnv>) {
  app.openapi(route, async (c) => {
    return c.json({ success: true as const, data: retentionItem(await readerRetention(readerOf(c))) }, 200);
  });
}
