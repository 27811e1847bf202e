import { z } from "@hono/zod-openapi";
import type { thresholdProfiles } from "../../../../schema/pg/schema.js";
import { METRICS, type ProfileField } from "../../../shared/telemetry/metrics.js";
import { isoTimestamps, nullableNumericDoc, numberOrNumericString, text } from "../../fields.js";

// A filter longer than ingest accepts for the same device field could never match an event.
const FILTER_BOUNDS = { platform: 64, resolution: 32, buildConfig: 64, gpu: 256, storage: 64 } as const;
const NAME_MAX = 255;

/** Every field at its bound, even written as \u escapes, stays far below this. */
export { RESOURCE_BODY_BYTES as PROFILE_BODY_BYTES } from "../../middleware/body-limits.js";

const filter = (max: number, what: string) =>
  text(max).nullable().describe(`${what}; null matches any. 1 to ${max} characters.`);
// Ingest accepts only finite perf values >= 0, so a threshold outside that range means nothing.
const threshold = (unit: string) => z.number().min(0).nullable().describe(`${unit}; null: not defined`);
// In requests a threshold may also be a numeric JSON string ("16.6"), as the Framedash CLI sends its
// flags; answers always carry numbers.
const thresholdInput = (unit: string) =>
  numberOrNumericString('must be a number or a numeric string such as "16.6"')
    .pipe(z.number().min(0))
    .nullable()
    .openapi({
      ...nullableNumericDoc,
      description: `${unit}, at least 0; a number or a numeric string; null: not defined`,
    });

// The budget share: the share of heartbeats within one refresh of their display, from 0 to 1.
const BUDGET_SHARE_DOC =
  "Share of heartbeats, 0 to 1, within one refresh of their display (1000 / display.hz, 60 Hz where not sent) a cell needs";
const budgetShare = (level: string) =>
  z.number().min(0).max(1).nullable().describe(`${BUDGET_SHARE_DOC} ${level}; null: not defined`);
const budgetShareInput = (level: string) =>
  numberOrNumericString('must be a number or a numeric string such as "0.9"')
    .pipe(z.number().min(0).max(1))
    .nullable()
    .openapi({
      ...nullableNumericDoc,
      description: `${BUDGET_SHARE_DOC} ${level}; a number or a numeric string; null: not defined`,
    });

/** The word a threshold's description gives its metric's unit. */
const UNIT_WORD = { fps: "FPS", ms: "Milliseconds", MB: "Megabytes" } as const;

/** One value per profile field of the metric table, in its order (fpsGood, fpsWarn, frameTimeGood, …). */
function perThreshold<T>(of: (m: (typeof METRICS)[number]) => [T, T]): Record<ProfileField, T> {
  return Object.fromEntries(
    METRICS.flatMap((m) => {
      const [good, warn] = of(m);
      return [
        [m.profile.good, good],
        [m.profile.warn, warn],
      ];
    }),
  ) as Record<ProfileField, T>;
}

const fields = {
  name: text(NAME_MAX),
  platform: filter(FILTER_BOUNDS.platform, "Platform filter"),
  resolution: filter(FILTER_BOUNDS.resolution, "Resolution filter such as 1920x1080"),
  buildConfig: filter(FILTER_BOUNDS.buildConfig, "Build configuration filter"),
  gpu: filter(FILTER_BOUNDS.gpu, "GPU filter"),
  storage: filter(FILTER_BOUNDS.storage, "Storage filter"),
  ...perThreshold((m) => [threshold(UNIT_WORD[m.unit]), threshold(UNIT_WORD[m.unit])]),
  budgetShareGood: budgetShare("to be good"),
  budgetShareWarn: budgetShare("to be acceptable (warn)"),
};

const inputFields = {
  ...fields,
  ...perThreshold((m) => [thresholdInput(UNIT_WORD[m.unit]), thresholdInput(UNIT_WORD[m.unit])]),
  budgetShareGood: budgetShareInput("to be good"),
  budgetShareWarn: budgetShareInput("to be acceptable (warn)"),
};

export const ThresholdProfileSchema = z
  .object({
    id: z.uuid(),
    ...fields,
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .openapi("ThresholdProfile");

const optionalFields = Object.fromEntries(Object.entries(inputFields).map(([k, v]) => [k, v.optional()])) as {
  [K in keyof typeof inputFields]: z.ZodOptional<(typeof inputFields)[K]>;
};

// Strict: a misspelt field in a PATCH would otherwise be dropped silently and look like success.
export const ThresholdProfileCreateSchema = z
  .strictObject({ ...optionalFields, name: inputFields.name })
  .describe("Omitted filters and thresholds are null.")
  .openapi("ThresholdProfileCreate");

export const ThresholdProfileUpdateSchema = z
  .strictObject(optionalFields)
  .describe("Partial update: omitted fields are unchanged, null clears a filter or threshold.")
  .openapi("ThresholdProfileUpdate");

export const ProfileParams = z.object({
  id: z.uuid().openapi({ param: { name: "id", in: "path" }, description: "Project UUID" }),
  profileId: z
    .uuid()
    .openapi({ param: { name: "profileId", in: "path" }, description: "Threshold profile UUID" }),
});

export const DeletedSchema = z.object({ id: z.uuid() }).openapi("DeletedThresholdProfile");

type ProfileRow = typeof thresholdProfiles.$inferSelect;

export function profileItem(row: ProfileRow): z.infer<typeof ThresholdProfileSchema> {
  return {
    id: row.id,
    name: row.name,
    platform: row.platform,
    resolution: row.resolution,
    buildConfig: row.buildConfig,
    gpu: row.gpu,
    storage: row.storage,
    ...perThreshold((m) => [row[m.profile.good], row[m.profile.warn]]),
    budgetShareGood: row.budgetShareGood,
    budgetShareWarn: row.budgetShareWarn,
    ...isoTimestamps(row),
  };
}
