import { sql } from "drizzle-orm";
import {
  boolean,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

const timestamps = {
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
};

export const tenants = pgTable("tenants", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  planId: text("plan_id").notNull(),
  ...timestamps,
});

export const projects = pgTable(
  "projects",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    ...timestamps,
  },
  (t) => [index("projects_tenant_idx").on(t.tenantId)],
);

// Only the SHA-256 of a key is stored; `prefix` is the first characters, kept so a dashboard can
// tell keys apart without being able to use them.
export const apiKeys = pgTable(
  "api_keys",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    keyHash: text("key_hash").notNull().unique(),
    prefix: text("prefix").notNull(),
    preset: text("preset").notNull(),
    scopes: text("scopes").array().notNull(),
    createdAt: timestamps.createdAt,
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("api_keys_project_idx").on(t.projectId)],
);

// OAuth 2.1 opaque access tokens: tenant-wide, only analytics:read and resources:write.
export const oauthTokens = pgTable(
  "oauth_tokens",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    scopes: text("scopes").array().notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    createdAt: timestamps.createdAt,
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("oauth_tokens_tenant_idx").on(t.tenantId)],
);

// The alerting issue extends this table; the walking skeleton needs only what project status counts.
export const alertRules = pgTable(
  "alert_rules",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    isActive: boolean("is_active").notNull().default(true),
    ...timestamps,
  },
  (t) => [index("alert_rules_project_active_idx").on(t.projectId).where(sql`${t.isActive}`)],
);

// Hardware/build filters (null matches any) and per-metric thresholds (null: not defined).
export const thresholdProfiles = pgTable(
  "threshold_profiles",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    platform: text("platform"),
    resolution: text("resolution"),
    buildConfig: text("build_config"),
    gpu: text("gpu"),
    storage: text("storage"),
    fpsGood: doublePrecision("fps_good"),
    fpsWarn: doublePrecision("fps_warn"),
    frameTimeGood: doublePrecision("frame_time_good"),
    frameTimeWarn: doublePrecision("frame_time_warn"),
    memoryGood: doublePrecision("memory_good"),
    memoryWarn: doublePrecision("memory_warn"),
    gpuTimeGood: doublePrecision("gpu_time_good"),
    gpuTimeWarn: doublePrecision("gpu_time_warn"),
    ...timestamps,
  },
  (t) => [index("threshold_profiles_project_idx").on(t.projectId, t.createdAt)],
);

// `mapId` is the user's identifier (the heatmap's and the events' map_id); `id` is internal.
// The image lives in R2 under `imageKey`.
export const maps = pgTable(
  "maps",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    mapId: text("map_id").notNull(),
    name: text("name").notNull(),
    imageKey: text("image_key").notNull(),
    imageContentType: text("image_content_type").notNull(),
    imageWidth: integer("image_width").notNull(),
    imageHeight: integer("image_height").notNull(),
    worldMinX: doublePrecision("world_min_x").notNull(),
    worldMinY: doublePrecision("world_min_y").notNull(),
    worldMaxX: doublePrecision("world_max_x").notNull(),
    worldMaxY: doublePrecision("world_max_y").notNull(),
    worldMinZ: doublePrecision("world_min_z"),
    worldMaxZ: doublePrecision("world_max_z"),
    ...timestamps,
  },
  (t) => [uniqueIndex("maps_project_map_id_uq").on(t.projectId, t.mapId)],
);

export const contentEntries = pgTable(
  "content_entries",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    contentType: text("content_type").notNull(),
    contentId: text("content_id").notNull(),
    displayName: text("display_name").notNull(),
    description: text("description"),
    category: text("category"),
    metadata: jsonb("metadata"),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("content_entries_key_uq").on(t.projectId, t.contentType, t.contentId),
    index("content_entries_order_idx").on(t.projectId, t.contentType, t.displayName),
  ],
);

// Data exports: a queued job that streams the project's events from ClickHouse into one R2 object.
// `requestedBy` is the API key that asked (keys only: exports need data:admin).
export const dataExports = pgTable(
  "data_exports",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    requestedBy: uuid("requested_by").references(() => apiKeys.id, { onDelete: "set null" }),
    format: text("format").notNull(),
    rangeFrom: timestamp("range_from", { withTimezone: true, mode: "date" }).notNull(),
    rangeTo: timestamp("range_to", { withTimezone: true, mode: "date" }).notNull(),
    eventName: text("event_name"),
    status: text("status").notNull().default("queued"),
    rowCount: integer("row_count"),
    sizeBytes: doublePrecision("size_bytes"),
    objectKey: text("object_key"),
    error: text("error"),
    createdAt: timestamps.createdAt,
    startedAt: timestamp("started_at", { withTimezone: true, mode: "date" }),
    completedAt: timestamp("completed_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("data_exports_project_idx").on(t.projectId, t.createdAt)],
);

// Audit of player erasures. The player's identifier itself is not kept, only its SHA-256, so the
// audit trail does not become the last copy of what was erased.
export const erasures = pgTable(
  "erasures",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    requestedBy: uuid("requested_by").references(() => apiKeys.id, { onDelete: "set null" }),
    playerIdSha256: text("player_id_sha256").notNull(),
    status: text("status").notNull(),
    rowsRemoved: integer("rows_removed").notNull().default(0),
    steps: jsonb("steps").notNull().default([]),
    error: text("error"),
    createdAt: timestamps.createdAt,
    completedAt: timestamp("completed_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("erasures_project_idx").on(t.projectId, t.createdAt)],
);
