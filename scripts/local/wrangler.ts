import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { LocalStack } from "./stack.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** `wrangler dev` serving the Worker against the stack's engines, in its own process group. */
export function startWrangler(stack: LocalStack, opts: { port: number; persistTo: string }): ChildProcess {
  const vars = {
    DATABASE_URL: stack.databaseUrl,
    CLICKHOUSE_URL: stack.clickhouse.url,
    CLICKHOUSE_USER: stack.clickhouse.user,
    CLICKHOUSE_PASSWORD: stack.clickhouse.password,
    NEON_LOCAL_PROXY: stack.neonProxy,
  };
  const args = [
    `${ROOT}node_modules/wrangler/bin/wrangler.js`,
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(opts.port),
    "--persist-to",
    opts.persistTo,
    // Local dev does not fire Cron Triggers; this exposes /__scheduled to run alert evaluation by hand.
    "--test-scheduled",
  ];
  args.push("--show-interactive-dev-session=false", "--log-level", process.env.WRANGLER_LOG ?? "warn");
  for (const [k, v] of Object.entries(vars)) {
    args.push("--var", `${k}:${v}`);
  }
  // Its own process group, so stopping it stops workerd too and nothing keeps the port.
  return spawn(process.execPath, args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", "inherit", "inherit"],
    // No network beyond loopback here: use the fallback Request.cf rather than fetching it.
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
}

export async function waitUntilServing(child: ChildProcess, baseUrl: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`wrangler dev exited with ${child.exitCode}`);
    }
    try {
      const res = await fetch(`${baseUrl}/v1/openapi.json`);
      if (res.ok) {
        return;
      }
    } catch {
      // not yet listening
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error("wrangler dev did not start serving within 120 s");
}

export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid) {
      process.kill(-child.pid, signal);
    }
  } catch {
    // already gone
  }
}

/** SIGTERM to the group, then SIGKILL after 5 s if it is still there. */
export async function stopWrangler(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) {
    return;
  }
  const exited = new Promise((r) => child.once("exit", r));
  signalGroup(child, "SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  signalGroup(child, "SIGKILL");
}
