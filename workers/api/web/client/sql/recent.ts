// The person's recent queries on the SQL page, per project, kept on this device only (localStorage):
// the newest first, each once, at most MAX. Storage that is full or turned off keeps nothing.

export type Recent = { sql: string; at: number };

const MAX = 20;

function keyOf(projectId: string): string {
  return `sql-recent:${projectId}`;
}

export function readRecent(projectId: string): Recent[] {
  try {
    const parsed: unknown = JSON.parse(localStorage.getItem(keyOf(projectId)) ?? "[]");
    return Array.isArray(parsed)
      ? parsed.filter(
          (r): r is Recent =>
            typeof r === "object" && r !== null && typeof r.sql === "string" && typeof r.at === "number",
        )
      : [];
  } catch {
    return [];
  }
}

export function remember(projectId: string, sql: string): void {
  const next = [{ sql, at: Date.now() }, ...readRecent(projectId).filter((r) => r.sql !== sql)].slice(0, MAX);
  try {
    localStorage.setItem(keyOf(projectId), JSON.stringify(next));
  } catch {
    // Full or unavailable: the query still runs.
  }
}

export function forgetRecent(projectId: string): void {
  try {
    localStorage.removeItem(keyOf(projectId));
  } catch {
    // Nothing kept anyway.
  }
}
