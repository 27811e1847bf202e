import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

// The package as npm would publish it: its build writes what package.json's exports and files name.
const HERE = join(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(join(HERE, "package.json"), "utf8")) as {
  name: string;
  type: string;
  exports: { ".": { types: string; import: string } };
  files: string[];
  dependencies?: Record<string, string>;
};

describe("the published package", () => {
  it("builds an ESM module and its types where package.json points, with no runtime dependency", async () => {
    execFileSync(process.execPath, [join(HERE, "build.mjs")], { cwd: HERE, stdio: "pipe" });
    expect(pkg.type).toBe("module");
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(pkg.files).toContain("dist");
    const entry = join(HERE, pkg.exports["."].import);
    const types = join(HERE, pkg.exports["."].types);
    expect(existsSync(entry)).toBe(true);
    const dts = readFileSync(types, "utf8");
    for (const fn of [
      "init",
      "track",
      "setMap",
      "setPlayer",
      "setCamera",
      "setPosition",
      "flush",
      "shutdown",
    ]) {
      expect(dts).toContain(`export declare function ${fn}(`);
    }
    const mod = (await import(pathToFileURL(entry).href)) as Record<string, unknown>;
    expect(Object.keys(mod).sort()).toEqual(
      [
        "SDK_VERSION",
        "Telemetry",
        "flush",
        "init",
        "setCamera",
        "setMap",
        "setPlayer",
        "setPosition",
        "shutdown",
        "stats",
        "track",
      ].sort(),
    );
    expect(mod.SDK_VERSION).toBe(
      (JSON.parse(readFileSync(join(HERE, "package.json"), "utf8")) as { version: string }).version,
    );
  });
});
