export const SCOPES = [
  "events:write",
  "events:synthetic",
  "analytics:read",
  "resources:write",
  "data:admin",
] as const;
export type Scope = (typeof SCOPES)[number];

export const KEY_PRESETS = {
  ingest: ["events:write"],
  read: ["analytics:read"],
  readwrite: ["analytics:read", "resources:write"],
  full: ["analytics:read", "resources:write", "data:admin"],
} as const satisfies Record<string, readonly Scope[]>;
export type KeyPreset = keyof typeof KEY_PRESETS;
/** The preset names as a tuple, for the typed `api_keys.preset` column. */
export const KEY_PRESET_NAMES = [
  "ingest",
  "read",
  "readwrite",
  "full",
] as const satisfies readonly KeyPreset[];

/** OAuth tokens can carry only these. */
export const TOKEN_SCOPES = ["analytics:read", "resources:write"] as const satisfies readonly Scope[];
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** Narrows text from outside the typed schema (a plain-SQL row, a command line) to a scope. */
export function isScope(s: unknown): s is Scope {
  return SCOPES.some((x) => x === s);
}

export function isTokenScope(s: unknown): s is TokenScope {
  return TOKEN_SCOPES.some((x) => x === s);
}

/** Scopes that let whoami reveal project, tenant and plan. */
export const MANAGEMENT_SCOPES: readonly Scope[] = ["analytics:read", "resources:write", "data:admin"];
