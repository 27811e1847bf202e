import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { LOCAL_OPERATOR_SECRET } from "../admin/announce.js";
import { buildClient } from "../build-client.js";
import { quietNetworkInspection } from "./inspector.js";
import { LOCAL_MAIL_FROM, type MailCatcher } from "./mail.js";
import type { LocalStack } from "./stack.js";

/** The local stack's SSO_SECRET_KEY (32 bytes, base64): for npm run dev and tests only. */
export const LOCAL_SSO_SECRET_KEY = "bG9jYWwtc3NvLWtleS1ucG0tcnVuLWRldi1vbmx5ISE=";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * The configs `wrangler dev` runs in one workerd: the local router first (it owns the port and plays
 * Cloudflare's routes), then the API Worker and the ingest Worker with their own configs.
 */
export const DEV_CONFIGS = [
  "scripts/local/router/wrangler.toml",
  "wrangler.toml",
  "workers/ingest/wrangler.toml",
];

/** What wrangler needs from the parent environment; the rest is left out (see startWrangler). */
const PASSED_ENV = [
  "PATH",
  "HOME",
  "TMPDIR",
  "TMP",
  "TEMP",
  "XDG_CONFIG_HOME",
  "WRANGLER_LOG",
  "NODE_OPTIONS",
  // A Worker var (workers/shared/config.ts), passed on so a benchmark can turn the credential cache off.
  "CREDENTIAL_CACHE_TTL_MS",
  // The local-only knobs (workers/shared/config.ts LocalKnobs), one JSON binding: a benchmark sets it
  // to make the alert consumers fail halfway through their messages, or to write an export in several
  // segments on a few million events.
  "LOCAL_KNOBS",
];

/** `wrangler dev` serving both Workers against the stack's engines, in its own process group. */
export function startWrangler(
  stack: LocalStack,
  opts: {
    port: number;
    persistTo: string;
    mail?: MailCatcher;
    /** Each line of wrangler's output (the Workers' console logs among them) instead of this process's. */
    onOutput?: (line: string) => void;
    /**
     * The inspector's port; given, the inspector's Network domain is kept off (scripts/local/inspector.ts:
     * otherwise a long subrequest response, an export's, exhausts workerd's file descriptors).
     */
    inspectorPort?: number;
  },
): ChildProcess {
  // The API Worker imports the dashboard's browser bundle as a module: build it first.
  buildClient();
  const vars = {
    DATABASE_URL: stack.databaseUrl,
    CLICKHOUSE_URL: stack.clickhouse.url,
    CLICKHOUSE_USER: stack.clickhouse.user,
    CLICKHOUSE_PASSWORD: stack.clickhouse.password,
    NEON_LOCAL_PROXY: stack.neonProxy,
    // What the admin CLI presents to announce its changes (scripts/admin/announce.ts).
    OPERATOR_SECRET: process.env.OPERATOR_SECRET || LOCAL_OPERATOR_SECRET,
    // Encrypts studios' SSO client secrets at rest (workers/api/sso/secret.ts); a fixed local key.
    SSO_SECRET_KEY: process.env.SSO_SECRET_KEY || LOCAL_SSO_SECRET_KEY,
    // The DNS-over-HTTPS resolver that proves SSO domains: wrangler.toml's public one unless given
    // (the browser test gives its loopback resolver, test/support/doh-server.ts).
    ...(process.env.SSO_DNS_RESOLVER ? { SSO_DNS_RESOLVER: process.env.SSO_DNS_RESOLVER } : {}),
    // Mail goes to the local catcher over plain SMTP (workers/api/mail/smtp.ts); sign-up is open locally.
    ...(opts.mail
      ? {
          SMTP_HOST: opts.mail.smtpHost,
          SMTP_PORT: String(opts.mail.smtpPort),
          MAIL_FROM: LOCAL_MAIL_FROM,
          SIGNUP: "open",
        }
      : {}),
  };
  const args = [`${ROOT}node_modules/wrangler/bin/wrangler.js`, "dev"];
  for (const config of DEV_CONFIGS) {
    args.push("-c", config);
  }
  args.push(
    "--ip",
    "127.0.0.1",
    "--port",
    String(opts.port),
    "--persist-to",
    opts.persistTo,
    // Local dev does not fire Cron Triggers; this exposes /__scheduled (the router hands it to the API
    // Worker's scheduled()) to run alert evaluation by hand.
    "--test-scheduled",
    "--show-interactive-dev-session=false",
    ...(opts.inspectorPort !== undefined ? ["--inspector-port", String(opts.inspectorPort)] : []),
    "--log-level",
    process.env.WRANGLER_LOG ?? "warn",
  );
  // `--var` reaches only the first config's Worker, so the engines' addresses travel as environment
  // variables, which wrangler binds in every Worker it runs (CLOUDFLARE_INCLUDE_PROCESS_ENV). The
  // environment is therefore reduced to what wrangler itself needs plus these values. A .dev.vars file
  // beside a config would take their place for that Worker (wrangler's rule), so none is expected there.
  const passed = Object.fromEntries(PASSED_ENV.flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])));
  // Its own process group, so stopping it stops workerd too and nothing keeps the port.
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    detached: true,
    stdio: ["ignore", ...(opts.onOutput ? (["pipe", "pipe"] as const) : (["inherit", "inherit"] as const))],
    env: {
      ...passed,
      ...vars,
      CLOUDFLARE_INCLUDE_PROCESS_ENV: "true",
      WRANGLER_SEND_METRICS: "false",
      // No network beyond loopback here: use the fallback Request.cf rather than fetching it.
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
    },
  });
  if (opts.inspectorPort !== undefined) {
    const quiet = quietNetworkInspection(opts.inspectorPort);
    child.once("exit", () => quiet.stop());
    networkQuieted.set(child, quiet.quieted);
  }
  const onOutput = opts.onOutput;
  if (onOutput) {
    for (const stream of [child.stdout, child.stderr]) {
      if (stream) {
        createInterface({ input: stream }).on("line", onOutput);
      }
    }
  }
  return child;
}

/** Per wrangler child started with an inspector port: resolves once its Network domain is off. */
const networkQuieted = new WeakMap<ChildProcess, Promise<void>>();

/**
 * Until both Workers answer through the router: the API's OpenAPI document and ingest's 405 to a GET
 * (and, with an inspector port, until the inspector's Network domain is off).
 */
export async function waitUntilServing(child: ChildProcess, baseUrl: string): Promise<void> {
  await untilRoutesAnswer(child, baseUrl);
  await networkQuieted.get(child);
}

async function untilRoutesAnswer(child: ChildProcess, baseUrl: string): Promise<void> {
  const origin = new URL(baseUrl).origin;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`wrangler dev exited with ${child.exitCode}`);
    }
    try {
      const [api, ingest] = await Promise.all([
        fetch(`${origin}/api/v1/openapi.json`),
        fetch(`${origin}/v1/events`, { method: "GET" }),
      ]);
      await Promise.all([api.body?.cancel(), ingest.body?.cancel()]);
      if (api.ok && ingest.status === 405) {
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
