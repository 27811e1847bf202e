// The registry reachable from our machines lacks some other-platform binaries (biome, buf, chdb), so
// `npm install` leaves them out of package-lock.json and `npm ci` then refuses the lock. This adds the
// entries npm would have written, with os/cpu/libc read from the package name, so `npm ci` skips them
// on platforms that do not match. Run it after any `npm install` that rewrites the lock.
import { readFileSync, writeFileSync } from "node:fs";

const lock = JSON.parse(readFileSync("package-lock.json", "utf8"));
const pkgs = lock.packages;
const cpuOf = { arm64: "arm64", x64: "x64", armv7: "arm", arm: "arm", ia32: "ia32" };
let added = 0;
for (const [path, entry] of Object.entries(pkgs)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const at = `node_modules/${name}`;
    if (pkgs[at]) {
      continue;
    }
    const m = /-(android|darwin|linux|win32|freebsd)-([a-z0-9]+)(?:-(musl|gnu))?$/.exec(name);
    if (!m) {
      continue;
    }
    pkgs[at] = {
      version: version.replace(/^[\^~]/, ""),
      ...(entry.dev || path === "" ? { dev: true } : {}),
      optional: true,
      os: [m[1]],
      cpu: [cpuOf[m[2]] ?? m[2]],
      ...(m[3] ? { libc: [m[3] === "gnu" ? "glibc" : "musl"] } : {}),
    };
    added++;
  }
}
lock.packages = Object.fromEntries(
  Object.entries(pkgs).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
writeFileSync("package-lock.json", `${JSON.stringify(lock, null, 2)}\n`);
console.log(`added ${added} platform entries`);
