import { sql } from "drizzle-orm";
import {
  boolean,
  check,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { KEY_PRESET_NAMES, SCOPES, TOKEN_SCOPES } from "../../workers/shared/credentials/scopes.js";
import { PLAN_IDS } from "../../workers/shared/plans.js";
import { ALERT_METRIC_KEYS, METRIC_KEYS } from "../../workers/shared/telemetry/metrics.js";
import {
  ALERT_STATUSES,
  AUDIT_ACTOR_TYPES,
  AUDIT_OUTCOMES,
  type AuditDetail,
  BUILD_VERDICTS,
  CHANNEL_KINDS,
  type ContentMetadata,
  ERASURE_STATUSES,
  type ErasureStepOutcome,
  type ErasureWork,
  EXPORT_FORMAT_NAMES,
  EXPORT_STATUSES,
  type ExportUpload,
  KEY_CREATOR_TYPES,
  PAIR_RESULTS,
  THRESHOLD_LEVELS,
  type VerdictGroups,
  type WorstCellsRecord,
} from "./columns.js";

const timestamps = {
  createdAt: timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
};

export const tenants = pgTable(
  "tenants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    name: text("name").notNull(),
    planId: text("plan_id", { enum: PLAN_IDS }).notNull(),
    // Days of raw events an owner chose to keep, shorter than the plan's (plans.ts retentionDays);
    // null: the plan's. The plan caps it at read time, so a downgrade needs no update here.
    retentionDays: integer("retention_days"),
    ...timestamps,
  },
  (t) => [check("tenants_retention_days_range", sql`${t.retentionDays} BETWEEN 1 AND 3650`)],
);

// The days the retention purge ran (workers/api/data-retention/purge.ts): a cron run claims today's row
// before it deletes, so concurrent runs do not both delete, and gives it back when it fails.
export const retentionRuns = pgTable("retention_runs", {
  day: text("day").primaryKey(),
  startedAt: timestamp("started_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  finishedAt: timestamp("finished_at", { withTimezone: true, mode: "date" }),
});

export const projects = pgTable(
  "projects",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    // Bumped whenever stored analytics data changes underneath the cached answers (a player's
    // erasure): it is part of every analytics cache key, so an answer computed before the change is
    // never served after it.
    dataVersion: integer("data_version").notNull().default(0),
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
    preset: text("preset", { enum: KEY_PRESET_NAMES }).notNull(),
    scopes: text("scopes", { enum: SCOPES }).array().notNull(),
    // Optional label given on the API Keys page.
    name: text("name"),
    createdAt: timestamps.createdAt,
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
    // Accurate to LAST_USED_RESOLUTION (workers/shared/credentials/last-used.ts): written at most that often.
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
    // Who created the key (null on keys made before this was recorded: shown as "unknown"). For a user,
    // or an OAuth client acting for one, `createdByUserId` is the person (null once their account is
    // deleted); `createdById` is the creating key's or client's id.
    createdByType: text("created_by_type", { enum: KEY_CREATOR_TYPES }),
    createdByUserId: uuid("created_by_user_id").references(() => users.id, { onDelete: "set null" }),
    createdById: text("created_by_id"),
  },
  (t) => [
    index("api_keys_project_idx").on(t.projectId),
    index("api_keys_created_by_user_idx").on(t.createdByUserId),
  ],
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
    scopes: text("scopes", { enum: TOKEN_SCOPES }).array().notNull(),
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    createdAt: timestamps.createdAt,
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
    // The grant (user's consent to a client) the token was issued under; null for admin-made tokens.
    grantId: uuid("grant_id").references(() => oauthGrants.id, { onDelete: "cascade" }),
  },
  (t) => [index("oauth_tokens_tenant_idx").on(t.tenantId), index("oauth_tokens_grant_idx").on(t.grantId)],
);

export const MEMBERSHIP_ROLES = ["owner", "member"] as const;
export type MembershipRole = (typeof MEMBERSHIP_ROLES)[number];
export function isMembershipRole(value: unknown): value is MembershipRole {
  return MEMBERSHIP_ROLES.some((r) => r === value);
}

// People. `email` is stored normalized (trimmed, lower case), so the unique index is the identity.
// `passwordHash` is a PHC-style scrypt string (workers/api/accounts/password.ts); never the password.
export const users = pgTable("users", {
  id: uuid("id").primaryKey().defaultRandom(),
  email: text("email").notNull().unique(),
  passwordHash: text("password_hash").notNull(),
  // Shown to the studio on the members page; empty until the person sets it.
  name: text("name").notNull().default(""),
  lastSignInAt: timestamp("last_sign_in_at", { withTimezone: true, mode: "date" }),
  ...timestamps,
});

export const memberships = pgTable(
  "memberships",
  {
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    role: text("role", { enum: MEMBERSHIP_ROLES }).notNull(),
    createdAt: timestamps.createdAt,
  },
  (t) => [
    primaryKey({ columns: [t.userId, t.tenantId] }),
    index("memberships_tenant_idx").on(t.tenantId),
    check("memberships_role_check", sql`${t.role} in ('owner', 'member')`),
  ],
);

// Browser sessions: the cookie holds a random token; only its SHA-256 is stored. Revoked by sign-out.
export const sessions = pgTable(
  "sessions",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    createdAt: timestamps.createdAt,
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
    // Where and with what the session signed in (shown on the Account page; null on older sessions).
    ip: text("ip"),
    userAgent: text("user_agent"),
    // Accurate to SESSION_LAST_SEEN_RESOLUTION_MS (workers/api/credentials/sessions.ts): written at most that often.
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true, mode: "date" }),
    // The studio whose identity provider signed this session in (single sign-on); null for a password
    // sign-in (workers/api/sso/).
    ssoTenantId: uuid("sso_tenant_id").references(() => tenants.id, { onDelete: "set null" }),
  },
  (t) => [index("sessions_user_idx").on(t.userId)],
);

export const ACCOUNT_LINK_PURPOSES = ["signup", "invitation", "reset"] as const;
export type AccountLinkPurpose = (typeof ACCOUNT_LINK_PURPOSES)[number];
export const MAIL_STATUSES = ["pending", "sent", "failed"] as const;
export type MailStatus = (typeof MAIL_STATUSES)[number];

// Single-use links sent by mail: a sign-up's verification, an invitation to a studio, a password reset.
// Only the token's SHA-256 is stored. The row is written before the mail is sent and keeps the mail's
// outcome, so a mail that fails loses nothing: the link exists and can be sent again (a new token).
// signup: `passwordHash` and `tenantName` wait here until the email is verified; invitation: `tenantId`,
// `role`, `invitedBy`; reset: `userId`.
export const accountLinks = pgTable(
  "account_links",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    purpose: text("purpose", { enum: ACCOUNT_LINK_PURPOSES }).notNull(),
    tokenHash: text("token_hash").notNull().unique(),
    email: text("email").notNull(),
    userId: uuid("user_id").references(() => users.id, { onDelete: "cascade" }),
    tenantId: uuid("tenant_id").references(() => tenants.id, { onDelete: "cascade" }),
    role: text("role", { enum: MEMBERSHIP_ROLES }),
    invitedBy: uuid("invited_by").references(() => users.id, { onDelete: "set null" }),
    passwordHash: text("password_hash"),
    tenantName: text("studio_name"),
    createdAt: timestamps.createdAt,
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true, mode: "date" }),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
    mailStatus: text("mail_status", { enum: MAIL_STATUSES }).notNull().default("pending"),
    mailedAt: timestamp("mailed_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    index("account_links_tenant_idx").on(t.tenantId, t.purpose),
    index("account_links_email_idx").on(t.email, t.purpose),
    check("account_links_purpose_check", sql`${t.purpose} in ('signup', 'invitation', 'reset')`),
  ],
);

// Registered OAuth clients. All are public (no secret; PKCE is the proof). A loopback redirect URI
// matches any port (RFC 8252 section 7.3); any other must match exactly.
export const oauthClients = pgTable("oauth_clients", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  redirectUris: text("redirect_uris").array().notNull(),
  createdAt: timestamps.createdAt,
});

// A user's consent for a client to act on one tenant with some scopes. One grant per completed
// authorization; revoking it revokes every access and refresh token issued under it.
export const oauthGrants = pgTable(
  "oauth_grants",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    scopes: text("scopes", { enum: TOKEN_SCOPES }).array().notNull(),
    createdAt: timestamps.createdAt,
    lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("oauth_grants_user_idx").on(t.userId, t.createdAt)],
);

// Authorization codes: single use, short lived, bound to the client, the exact redirect URI and the
// PKCE S256 challenge. `grantId` is set when redeemed, so a replayed code can revoke what it produced.
export const oauthCodes = pgTable("oauth_codes", {
  id: uuid("id").primaryKey().defaultRandom(),
  codeHash: text("code_hash").notNull().unique(),
  clientId: text("client_id")
    .notNull()
    .references(() => oauthClients.id, { onDelete: "cascade" }),
  userId: uuid("user_id")
    .notNull()
    .references(() => users.id, { onDelete: "cascade" }),
  tenantId: uuid("tenant_id")
    .notNull()
    .references(() => tenants.id, { onDelete: "cascade" }),
  scopes: text("scopes", { enum: TOKEN_SCOPES }).array().notNull(),
  redirectUri: text("redirect_uri").notNull(),
  codeChallenge: text("code_challenge").notNull(),
  createdAt: timestamps.createdAt,
  expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
  usedAt: timestamp("used_at", { withTimezone: true, mode: "date" }),
  grantId: uuid("grant_id").references(() => oauthGrants.id, { onDelete: "cascade" }),
});

// Refresh tokens rotate: each use marks the row used and issues a new one. Presenting a used one
// again is reuse (a stolen copy or a lost race) and revokes the whole grant.
export const oauthRefreshTokens = pgTable(
  "oauth_refresh_tokens",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    grantId: uuid("grant_id")
      .notNull()
      .references(() => oauthGrants.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull().unique(),
    createdAt: timestamps.createdAt,
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true, mode: "date" }),
    revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("oauth_refresh_tokens_grant_idx").on(t.grantId)],
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
    // The share (0 to 1) of heartbeats within one refresh of their display (1000 / display.hz, 60 Hz where
    // not sent) that a cell needs to be good, or at least acceptable (warn): each device judged by its
    // own budget. Not a metric of the table: the heatmap's "budget" mode reads it.
    budgetShareGood: doublePrecision("budget_share_good"),
    budgetShareWarn: doublePrecision("budget_share_warn"),
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
    metadata: jsonb("metadata").$type<ContentMetadata>(),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("content_entries_key_uq").on(t.projectId, t.contentType, t.contentId),
    index("content_entries_order_idx").on(t.projectId, t.contentType, t.displayName),
  ],
);

// A rule watches one metric on one map against a bundle of threshold profiles (alertRuleProfiles).
// The map is referenced with the default NO ACTION: a map that rules watch cannot be deleted on its
// own (the rule would lose its meaning), yet deleting the whole project still cascades through both.
export const alertRules = pgTable(
  "alert_rules",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    isActive: boolean("is_active").notNull().default(true),
    mapId: uuid("map_id")
      .notNull()
      .references(() => maps.id),
    metric: text("metric", { enum: ALERT_METRIC_KEYS }).notNull(),
    thresholdLevel: text("threshold_level", { enum: THRESHOLD_LEVELS }).notNull(),
    failPercentage: doublePrecision("fail_percentage").notNull(),
    evaluationDays: integer("evaluation_days").notNull(),
    cellSize: integer("cell_size").notNull(),
    cooldownMinutes: integer("cooldown_minutes").notNull(),
    ...timestamps,
  },
  (t) => [
    index("alert_rules_project_active_idx").on(t.projectId).where(sql`${t.isActive}`),
    index("alert_rules_project_created_idx").on(t.projectId, t.createdAt),
    index("alert_rules_map_idx").on(t.mapId),
  ],
);

// The bundle: the lowest ordinal is the primary profile. Ordinals may have gaps (a deleted profile
// leaves one), so "the next one" is promoted simply by being the new lowest.
export const alertRuleProfiles = pgTable(
  "alert_rule_profiles",
  {
    alertRuleId: uuid("alert_rule_id")
      .notNull()
      .references(() => alertRules.id, { onDelete: "cascade" }),
    thresholdProfileId: uuid("threshold_profile_id")
      .notNull()
      .references(() => thresholdProfiles.id, { onDelete: "cascade" }),
    ordinal: integer("ordinal").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.alertRuleId, t.thresholdProfileId] }),
    index("alert_rule_profiles_profile_idx").on(t.thresholdProfileId),
  ],
);

// Where notifications go. The webhook signing secret is kept as written, not hashed: the service must
// produce HMACs with it, and a hash cannot sign. It is returned once, at creation, and never logged.
export const notificationChannels = pgTable(
  "notification_channels",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: CHANNEL_KINDS }).notNull(),
    name: text("name").notNull(),
    url: text("url").notNull(),
    signingSecret: text("signing_secret"),
    // Build regressions (a build's kept verdict `regressed`, per metric) are sent to this channel too.
    buildRegressions: boolean("build_regressions").notNull().default(false),
    ...timestamps,
  },
  (t) => [index("notification_channels_project_idx").on(t.projectId, t.createdAt)],
);

export const alertRuleChannels = pgTable(
  "alert_rule_channels",
  {
    alertRuleId: uuid("alert_rule_id")
      .notNull()
      .references(() => alertRules.id, { onDelete: "cascade" }),
    channelId: uuid("channel_id")
      .notNull()
      .references(() => notificationChannels.id, { onDelete: "cascade" }),
  },
  (t) => [
    primaryKey({ columns: [t.alertRuleId, t.channelId] }),
    index("alert_rule_channels_channel_idx").on(t.channelId),
  ],
);

// One row per change of a (rule, profile) status. `evaluatedProfileId` is the profile as evaluated
// and is never rewritten, so an event cannot be reattributed; `thresholdProfileId` is the live
// reference, set to null when the profile goes (by applyProfileDeletion, and by the FK as a backstop).
export const alertEvaluationEvents = pgTable(
  "alert_evaluation_events",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    alertRuleId: uuid("alert_rule_id")
      .notNull()
      .references(() => alertRules.id, { onDelete: "cascade" }),
    evaluatedProfileId: uuid("evaluated_profile_id").notNull(),
    thresholdProfileId: uuid("threshold_profile_id").references(() => thresholdProfiles.id, {
      onDelete: "set null",
    }),
    thresholdProfileName: text("threshold_profile_name"),
    thresholdProfileDeleted: boolean("threshold_profile_deleted").notNull().default(false),
    ruleName: text("rule_name").notNull(),
    metric: text("metric", { enum: ALERT_METRIC_KEYS }).notNull(),
    status: text("status", { enum: ALERT_STATUSES }).notNull(),
    failCount: integer("fail_count").notNull(),
    totalCount: integer("total_count").notNull(),
    failPercentage: doublePrecision("fail_percentage").notNull(),
    notified: boolean("notified").notNull(),
    // Null on events recorded before evaluations kept their worst cells.
    worstCells: jsonb("worst_cells").$type<WorstCellsRecord>(),
    // The scheduled run (the cron's scheduledTime) that recorded the event; null on events recorded
    // before runs were keyed. With the unique index below, one (rule, profile, run) records one event
    // however often its queue message is delivered (workers/api/alerts/evaluate.ts).
    runAt: timestamp("run_at", { withTimezone: true, mode: "date" }),
    // The outbox: the notification messages this event still has to hand to the notifications queue
    // (a JSON array, kept as text: jsonb would reorder the webhook body's keys), written in the event's
    // own transaction and cleared once sent; null when none are due.
    pendingNotifications: text("pending_notifications"),
    createdAt: timestamps.createdAt,
  },
  (t) => [
    index("alert_evaluation_events_project_idx").on(t.projectId, t.createdAt),
    index("alert_evaluation_events_rule_profile_idx").on(t.alertRuleId, t.evaluatedProfileId, t.createdAt),
    index("alert_evaluation_events_profile_idx").on(t.thresholdProfileId),
    uniqueIndex("alert_evaluation_events_run_idx").on(t.alertRuleId, t.evaluatedProfileId, t.runAt),
    index("alert_evaluation_events_pending_idx")
      .on(t.alertRuleId)
      .where(sql`${t.pendingNotifications} IS NOT NULL`),
  ],
);

// Where each (rule, profile) stands: the newest scheduled run that evaluated it and that evaluation's
// result (or its error). Runs only move forward: a message of an older run arriving after a newer one
// changes nothing, so overlapping or redelivered runs never record a status twice. The rule list's
// lastEvaluatedAt / lastResult read it; operators read stale rows from it (docs/operations.md).
export const alertPairStates = pgTable(
  "alert_pair_states",
  {
    alertRuleId: uuid("alert_rule_id")
      .notNull()
      .references(() => alertRules.id, { onDelete: "cascade" }),
    thresholdProfileId: uuid("threshold_profile_id")
      .notNull()
      .references(() => thresholdProfiles.id, { onDelete: "cascade" }),
    runAt: timestamp("run_at", { withTimezone: true, mode: "date" }).notNull(),
    evaluatedAt: timestamp("evaluated_at", { withTimezone: true, mode: "date" }).notNull(),
    // "error": the run's evaluation failed for good (see `error`); the pair's alert status stays the
    // status of its newest event.
    result: text("result", { enum: PAIR_RESULTS }).notNull(),
    failCount: integer("fail_count"),
    totalCount: integer("total_count"),
    failPercentage: doublePrecision("fail_percentage"),
    error: text("error"),
  },
  (t) => [
    primaryKey({ columns: [t.alertRuleId, t.thresholdProfileId] }),
    index("alert_pair_states_profile_idx").on(t.thresholdProfileId),
    index("alert_pair_states_run_idx").on(t.runAt),
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
    format: text("format", { enum: EXPORT_FORMAT_NAMES }).notNull(),
    rangeFrom: timestamp("range_from", { withTimezone: true, mode: "date" }).notNull(),
    rangeTo: timestamp("range_to", { withTimezone: true, mode: "date" }).notNull(),
    eventName: text("event_name"),
    status: text("status", { enum: EXPORT_STATUSES }).notNull().default("queued"),
    rowCount: integer("row_count"),
    sizeBytes: doublePrecision("size_bytes"),
    // Progress while running: the rows the export will hold (counted before the stream starts), and the
    // rows and bytes written so far (workers/api/exports/consumer.ts).
    rowsExpected: integer("rows_expected"),
    rowsWritten: integer("rows_written"),
    bytesWritten: doublePrecision("bytes_written"),
    objectKey: text("object_key"),
    error: text("error"),
    createdAt: timestamps.createdAt,
    startedAt: timestamp("started_at", { withTimezone: true, mode: "date" }),
    completedAt: timestamp("completed_at", { withTimezone: true, mode: "date" }),
    // A segmented export's upload between its queue messages (null before planning and for Parquet).
    upload: jsonb("upload").$type<ExportUpload>(),
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
    status: text("status", { enum: ERASURE_STATUSES }).notNull(),
    rowsRemoved: integer("rows_removed").notNull().default(0),
    steps: jsonb("steps").$type<ErasureStepOutcome[]>().notNull().default([]),
    error: text("error"),
    createdAt: timestamps.createdAt,
    completedAt: timestamp("completed_at", { withTimezone: true, mode: "date" }),
    // The erasures queue's consumer (workers/api/erasure/run.ts): when it first took the erasure (null
    // while it waits in the queue), the deliveries that took it, and until when the one running holds it
    // (a duplicate delivery waits for the lease instead of running the steps twice at once).
    startedAt: timestamp("started_at", { withTimezone: true, mode: "date" }),
    attempts: integer("attempts").notNull().default(0),
    leaseUntil: timestamp("lease_until", { withTimezone: true, mode: "date" }),
    // What the first delivery read before deleting anything (the player's sessions and days), so a retry
    // after the events are gone still reaches every derived row; cleared when the erasure ends.
    work: jsonb("work").$type<ErasureWork>(),
  },
  (t) => [index("erasures_project_idx").on(t.projectId, t.createdAt)],
);

// The audit log: who did what, to what, from where, and how it ended (workers/api/audit/). Rows are
// immutable: a trigger (migration 0011_audit_log_immutable) refuses every UPDATE but the growth of an
// aggregated row's count, every DELETE of a row younger than the retention (AUDIT_RETENTION_DAYS) and
// every TRUNCATE. No foreign keys: an entry outlives the user, key, project or studio it names, so ids
// are kept as they were, with the label (email, key name) they had then.
export const auditLog = pgTable(
  "audit_log",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    // Null only for what belongs to no studio (a failed sign-in to an unknown address).
    tenantId: uuid("tenant_id"),
    projectId: uuid("project_id"),
    actorType: text("actor_type", { enum: AUDIT_ACTOR_TYPES }).notNull(),
    // A user's, key's or OAuth client's id; null for the operator and the system.
    actorId: text("actor_id"),
    actorLabel: text("actor_label").notNull(),
    // The person behind the actor: the signed-in user, the user an OAuth token acts for.
    actorUserId: uuid("actor_user_id"),
    action: text("action").notNull(),
    targetType: text("target_type"),
    targetId: text("target_id"),
    targetLabel: text("target_label"),
    ip: text("ip"),
    userAgent: text("user_agent"),
    outcome: text("outcome", { enum: AUDIT_OUTCOMES }).notNull(),
    detail: jsonb("detail").$type<AuditDetail>().notNull().default({}),
    // Aggregated entries (failed sign-ins): one row per key and window, counting the attempts.
    aggregateKey: text("aggregate_key").unique(),
    count: integer("count").notNull().default(1),
    at: timestamp("at", { withTimezone: true, mode: "date" }).notNull(),
    // The last attempt an aggregated row counts; equal to `at` for every other row.
    lastAt: timestamp("last_at", { withTimezone: true, mode: "date" }).notNull(),
  },
  (t) => [
    index("audit_log_tenant_at_idx").on(t.tenantId, t.at, t.id),
    index("audit_log_at_idx").on(t.at),
    check("audit_log_action_check", sql`${t.action} ~ '^[a-z_]+(\\.[a-z_]+)+$'`),
    check("audit_log_count_check", sql`${t.count} >= 1`),
  ],
);

// Rows as selected, for code that passes them around. The typed text and jsonb columns above make
// these the exact shapes: no cast is needed to read a status, metric, kind or format.
export type TenantRow = typeof tenants.$inferSelect;
export type ProjectRow = typeof projects.$inferSelect;
export type ThresholdProfileRow = typeof thresholdProfiles.$inferSelect;
export type MapRow = typeof maps.$inferSelect;
export type ContentEntryRow = typeof contentEntries.$inferSelect;
export type AlertRuleRow = typeof alertRules.$inferSelect;
export type NotificationChannelRow = typeof notificationChannels.$inferSelect;
export type AlertEvaluationEventRow = typeof alertEvaluationEvents.$inferSelect;
export type DataExportRow = typeof dataExports.$inferSelect;
export type ErasureRow = typeof erasures.$inferSelect;

// The build a studio pins on the Builds page as every new build's baseline (one per project); without
// it a build is judged against its predecessor (docs/analytics.md, "Verdicts per build").
export const buildBaselines = pgTable("build_baselines", {
  projectId: uuid("project_id")
    .primaryKey()
    .references(() => projects.id, { onDelete: "cascade" }),
  buildId: text("build_id").notNull(),
  ...timestamps,
});

// A build's verdict against its baseline, one row per build and metric, kept once the cron judged it
// (workers/api/analytics/verdicts.ts); the primary key is what makes its notification once per build and
// metric.
/**
 * What a build is judged on: each metric's session medians, and the share of its sessions whose verdict is
 * poor (workers/api/analytics/session-verdicts.ts).
 */
export const BUILD_VERDICT_METRICS = [...METRIC_KEYS, "poor_session_share"] as const;

export const buildVerdicts = pgTable(
  "build_verdicts",
  {
    projectId: uuid("project_id")
      .notNull()
      .references(() => projects.id, { onDelete: "cascade" }),
    buildId: text("build_id").notNull(),
    metric: text("metric", { enum: BUILD_VERDICT_METRICS }).notNull(),
    baselineBuildId: text("baseline_build_id").notNull(),
    baselinePinned: boolean("baseline_pinned").notNull(),
    verdict: text("verdict", { enum: BUILD_VERDICTS }).notNull(),
    diffPct: doublePrecision("diff_pct"),
    ciLow: doublePrecision("ci_low"),
    ciHigh: doublePrecision("ci_high"),
    baselineSessions: integer("baseline_sessions").notNull(),
    candidateSessions: integer("candidate_sessions").notNull(),
    groups: jsonb("groups").$type<VerdictGroups>().notNull(),
    notified: boolean("notified").notNull().default(false),
    judgedAt: timestamp("judged_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.projectId, t.buildId, t.metric] })],
);

export type BuildVerdictRow = typeof buildVerdicts.$inferSelect;
export type AuditLogRow = typeof auditLog.$inferSelect;

export const SSO_CONNECTION_STATES = ["active", "pending"] as const;
export type SsoConnectionState = (typeof SSO_CONNECTION_STATES)[number];

// A studio's OpenID Connect provider (workers/api/sso/, docs/accounts.md "Single sign-on"). At most one
// `active` row (what sign-in uses) and one `pending` row (submitted, not yet proven by a test sign-in)
// per studio; a successful test copies the pending configuration onto the active row and deletes it.
// `clientSecret` is AES-GCM ciphertext under the SSO_SECRET_KEY Worker secret (workers/api/sso/secret.ts),
// never the secret. `requireSso` and `breakGlassUserId` (enforcement) are read on the active row only.
export const ssoConnections = pgTable(
  "sso_connections",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    state: text("state", { enum: SSO_CONNECTION_STATES }).notNull(),
    issuer: text("issuer").notNull(),
    clientId: text("client_id").notNull(),
    clientSecret: text("client_secret").notNull(),
    // Lower-case domains, as submitted; for the active row also claimed in sso_domains.
    domains: text("domains").array().notNull(),
    defaultRole: text("default_role", { enum: MEMBERSHIP_ROLES }).notNull().default("member"),
    requireSso: boolean("require_sso").notNull().default(false),
    breakGlassUserId: uuid("break_glass_user_id").references(() => users.id, { onDelete: "set null" }),
    createdBy: uuid("created_by").references(() => users.id, { onDelete: "set null" }),
    // When and as whom (the provider's email) the configuration last passed its test sign-in.
    testedAt: timestamp("tested_at", { withTimezone: true, mode: "date" }),
    testedAs: text("tested_as"),
    ...timestamps,
  },
  (t) => [
    uniqueIndex("sso_connections_tenant_state_idx").on(t.tenantId, t.state),
    check("sso_connections_state_check", sql`${t.state} in ('active', 'pending')`),
    check("sso_connections_role_check", sql`${t.defaultRole} in ('owner', 'member')`),
  ],
);

// Which studio's provider an email domain signs in with: the primary key makes a domain one studio's.
// Rows of the active connection only.
export const ssoDomains = pgTable(
  "sso_domains",
  {
    domain: text("domain").primaryKey(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    connectionId: uuid("connection_id")
      .notNull()
      .references(() => ssoConnections.id, { onDelete: "cascade" }),
  },
  (t) => [index("sso_domains_tenant_idx").on(t.tenantId)],
);

// A person's account at a provider (issuer + subject) linked to a user: later sign-ins find the user
// by this, so an email changed at the provider does not make a second user.
export const ssoIdentities = pgTable(
  "sso_identities",
  {
    issuer: text("issuer").notNull(),
    subject: text("subject").notNull(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    // The studio whose provider first linked it, and the email the provider last gave.
    tenantId: uuid("tenant_id").references(() => tenants.id, { onDelete: "set null" }),
    email: text("email").notNull(),
    createdAt: timestamps.createdAt,
    lastSignInAt: timestamp("last_sign_in_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [primaryKey({ columns: [t.issuer, t.subject] }), index("sso_identities_user_idx").on(t.userId)],
);

// A studio's proof that it owns an email domain (docs/accounts.md, "Single sign-on: proving a domain"):
// the TXT record `_gt-sso.<domain>` holding `gt-sso-verification=<token>`, checked through the DNS-over-
// HTTPS resolver the Worker's SSO_DNS_RESOLVER names. One token per (studio, domain), made when the
// studio first names the domain; it is published in DNS, so it is no credential, but it is shown only to
// the studio's owners. A domain routes sign-ins only while `verifiedAt` is set, and for one studio at a
// time (the partial unique index). `noticeDue`: made pending by migration 0018 (the domain routed
// before proofs existed); its owners are mailed once (`noticedAt`).
export const ssoDomainProofs = pgTable(
  "sso_domain_proofs",
  {
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    domain: text("domain").notNull(),
    token: text("token").notNull(),
    verifiedAt: timestamp("verified_at", { withTimezone: true, mode: "date" }),
    checkedAt: timestamp("checked_at", { withTimezone: true, mode: "date" }),
    noticeDue: boolean("notice_due").notNull().default(false),
    noticedAt: timestamp("noticed_at", { withTimezone: true, mode: "date" }),
    createdAt: timestamps.createdAt,
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.domain] }),
    uniqueIndex("sso_domain_proofs_verified_idx").on(t.domain).where(sql`${t.verifiedAt} is not null`),
  ],
);

export type SsoDomainProofRow = typeof ssoDomainProofs.$inferSelect;

export const SSO_FLOW_PURPOSES = ["sign_in", "test", "delete_account"] as const;
export type SsoFlowPurpose = (typeof SSO_FLOW_PURPOSES)[number];

// One authorization request in flight (10 minutes, single use). Only hashes: `stateHash` is SHA-256 of
// the `state` sent to the provider; `bindingHash` SHA-256 of the random value in the browser's
// `gt_sso` cookie, from which the PKCE verifier and the nonce are derived (workers/api/sso/flow.ts).
export const ssoFlows = pgTable(
  "sso_flows",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    stateHash: text("state_hash").notNull().unique(),
    bindingHash: text("binding_hash").notNull(),
    tenantId: uuid("tenant_id")
      .notNull()
      .references(() => tenants.id, { onDelete: "cascade" }),
    // Null once the configuration it ran with was replaced or removed: its answer is then refused.
    connectionId: uuid("connection_id").references(() => ssoConnections.id, { onDelete: "set null" }),
    purpose: text("purpose", { enum: SSO_FLOW_PURPOSES }).notNull(),
    // The email typed on the sign-in page (login_hint), and where to go after sign-in.
    email: text("email"),
    returnTo: text("return_to").notNull().default("/"),
    // The owner who started a test; the person confirming their account's deletion.
    userId: uuid("user_id").references(() => users.id, { onDelete: "cascade" }),
    createdAt: timestamps.createdAt,
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [
    index("sso_flows_expires_idx").on(t.expiresAt),
    check("sso_flows_purpose_check", sql`${t.purpose} in ('sign_in', 'test', 'delete_account')`),
  ],
);

export type SsoConnectionRow = typeof ssoConnections.$inferSelect;
