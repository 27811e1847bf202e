import net from "node:net";
import { MailDev } from "maildev";

// A real SMTP catcher on loopback (maildev): the Workers send to it over SMTP exactly as they send to a
// provider's relay in production, and people read the mail in its web inbox, tests through its REST API
// (GET <inbox>/api/email). Plain SMTP without AUTH: nothing leaves the machine.

export type MailCatcher = {
  smtpHost: string;
  smtpPort: number;
  /** The web inbox; its REST API is under /api. */
  inboxUrl: string;
  close(): Promise<void>;
};

/** The sender address of mail sent locally and in tests. */
export const LOCAL_MAIL_FROM = "Game Telemetry Analytics <no-reply@telemetry.localhost>";

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Starts maildev with its mail under `dir`; ports default to free ones. */
export async function startMailCatcher(opts: {
  dir: string;
  smtpPort?: number;
  webPort?: number;
}): Promise<MailCatcher> {
  const smtpPort = opts.smtpPort ?? (await freePort());
  const webPort = opts.webPort ?? (await freePort());
  const maildev = new MailDev({
    smtp: smtpPort,
    web: webPort,
    ip: "127.0.0.1",
    webIp: "127.0.0.1",
    mailDirectory: opts.dir,
    silent: true,
  });
  // maildev announces its API on stdout even when silent; the ready line names the inbox instead.
  const log = console.log;
  console.log = () => {};
  try {
    await maildev.start();
  } finally {
    console.log = log;
  }
  return {
    smtpHost: "127.0.0.1",
    smtpPort,
    inboxUrl: `http://127.0.0.1:${webPort}`,
    close: () => maildev.stop(),
  };
}
