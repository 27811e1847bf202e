// Mail leaves over SMTP on cloudflare:sockets (worker-mailer), so any provider's relay works and no
// provider-specific HTTP API is needed. Configured by secrets: SMTP_HOST, SMTP_PORT, SMTP_USER,
// SMTP_PASSWORD, MAIL_FROM. Workers cannot open port 25: production uses STARTTLS on 587 or implicit
// TLS on 465. Locally and in tests the catcher (maildev) listens on loopback without TLS or AUTH.

export type Mail = { to: string; subject: string; text: string };

export type SmtpConfig = {
  host: string;
  port: number;
  user: string;
  password: string;
  from: string;
};

/** Each wait on the server is bounded: a page that sends mail must answer even when the relay hangs. */
const TIMEOUT_MS = 10_000;

function binding(
  env: Env,
  name: "SMTP_HOST" | "SMTP_PORT" | "SMTP_USER" | "SMTP_PASSWORD" | "MAIL_FROM",
): string {
  // Secrets a deploy may lack: absent is the same as empty.
  const value: unknown = env[name];
  return typeof value === "string" ? value.trim() : "";
}

/** The SMTP settings, or the reason mail cannot be sent (a deploy without them still serves pages). */
export function smtpConfig(env: Env): SmtpConfig | { missing: string } {
  const host = binding(env, "SMTP_HOST");
  const from = binding(env, "MAIL_FROM");
  const port = Number(binding(env, "SMTP_PORT") || "587");
  if (!host || !from) {
    return { missing: "SMTP_HOST and MAIL_FROM must be set" };
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535 || port === 25) {
    return { missing: "SMTP_PORT must be a port other than 25 (Workers cannot open 25)" };
  }
  return { host, port, user: binding(env, "SMTP_USER"), password: binding(env, "SMTP_PASSWORD"), from };
}

/** MAIL_FROM as `Name <address>` or a bare address; the SMTP envelope takes only the address. */
export function sender(from: string): { name?: string; email: string } {
  const m = /^\s*(.*?)\s*<([^<>\s]+@[^<>\s]+)>\s*$/.exec(from);
  if (!m) {
    return { email: from.trim() };
  }
  const name = (m[1] ?? "").replace(/^"(.*)"$/, "$1");
  return name ? { name, email: m[2] ?? "" } : { email: m[2] ?? "" };
}

export type MailOutcome = { sent: true } | { sent: false; reason: string };

/**
 * Sends one mail. Never throws: the caller has already recorded what the mail announces and records
 * the outcome beside it. The message and its link are never logged, only the failure's reason.
 */
export async function sendMail(env: Env, mail: Mail): Promise<MailOutcome> {
  const config = smtpConfig(env);
  if ("missing" in config) {
    console.error("mail not sent:", config.missing);
    return { sent: false, reason: config.missing };
  }
  try {
    // Loaded when a mail is sent: worker-mailer imports cloudflare:sockets, which only a Worker has,
    // and the API's code is also loaded in Node (the OpenAPI document's generator, benchmarks).
    const { LogLevel, WorkerMailer } = await import("worker-mailer");
    await WorkerMailer.send(
      {
        host: config.host,
        port: config.port,
        // 465 is TLS from the first byte; anything else upgrades with STARTTLS when the server offers it.
        secure: config.port === 465,
        startTls: true,
        credentials: config.user ? { username: config.user, password: config.password } : undefined,
        authType: ["plain", "login"],
        logLevel: LogLevel.NONE,
        socketTimeoutMs: TIMEOUT_MS,
        responseTimeoutMs: TIMEOUT_MS,
      },
      { from: sender(config.from), to: mail.to, subject: mail.subject, text: mail.text },
    );
    return { sent: true };
  } catch (err) {
    const reason = err instanceof Error ? err.message.split("\n")[0]?.slice(0, 200) : String(err);
    console.error("mail not sent:", reason);
    return { sent: false, reason: reason ?? "unknown" };
  }
}
