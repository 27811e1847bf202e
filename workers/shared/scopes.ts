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

/** OAuth tokens can carry only these. */
export const TOKEN_SCOPES = ["analytics:read", "resources:write"] as const satisfies readonly Scope[];

/** Scopes that let whoami reveal project, tenant and plan. */
export const MANAGEMENT_SCOPES: readonly Scope[] = ["analytics:read", "resources:write", "data:admin"];
