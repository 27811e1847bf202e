/**
 * X-SDK-Version as the SDKs send it: `name/version` (UE5: `ue5/0.1.13`) or a bare version (Unity and
 * Godot: `0.1.7`), in which case the name is unknown and left empty.
 */
export function parseSdkVersion(header: string): { name: string; version: string } {
  const value = header.trim();
  const slash = value.indexOf("/");
  if (slash < 0) {
    return { name: "", version: value };
  }
  return { name: value.slice(0, slash).trim(), version: value.slice(slash + 1).trim() };
}
