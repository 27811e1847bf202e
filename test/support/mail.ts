// Reads mail from the catcher (maildev's REST API) as a person would read their inbox: the newest mail
// to an address (maildev lists mail in arrival order), polled until it arrives.

import { waitFor } from "./wait.js";

type Caught = { id: string; subject: string; text?: string; time: string; to: Array<{ address: string }> };

export type ReceivedMail = { subject: string; text: string };

/** The newest mail to `to` whose subject matches, waiting up to `timeoutMs` for it to arrive. */
export async function mailTo(
  inboxUrl: string,
  to: string,
  subject: RegExp = /./,
  timeoutMs = 15_000,
): Promise<ReceivedMail> {
  const newest = await waitFor(
    async () => {
      const res = await fetch(`${inboxUrl}/api/email`);
      const all = (await res.json()) as Caught[];
      return all
        .filter(
          (m) => m.to.some((t) => t.address.toLowerCase() === to.toLowerCase()) && subject.test(m.subject),
        )
        .at(-1);
    },
    (m) => m !== undefined,
    { timeoutMs, message: `a mail to ${to} matching ${subject}` },
  );
  return { subject: newest?.subject ?? "", text: newest?.text ?? "" };
}

/** Every mail to `to` so far (none is fine), newest first. */
export async function mailsTo(inboxUrl: string, to: string): Promise<ReceivedMail[]> {
  const all = (await (await fetch(`${inboxUrl}/api/email`)).json()) as Caught[];
  return all
    .filter((m) => m.to.some((t) => t.address.toLowerCase() === to.toLowerCase()))
    .reverse()
    .map((m) => ({ subject: m.subject, text: m.text ?? "" }));
}

/** Every mail to `to`, newest first, once there are at least `count` of them (polled, bounded). */
export async function atLeast(inboxUrl: string, to: string, count: number, timeoutMs = 15_000) {
  return waitFor(
    () => mailsTo(inboxUrl, to),
    (mails) => mails.length >= count,
    { timeoutMs, message: (mails) => `${count} mails to ${to} (${(mails as unknown[]).length} so far)` },
  );
}

/** The link in a mail's text to the page at `path` (the first one). */
export function linkIn(mail: ReceivedMail, path: string): string {
  const m = new RegExp(`https?://[^\\s]+${path.replaceAll("/", "\\/")}\\?token=[A-Za-z0-9_%-]+`).exec(
    mail.text,
  );
  if (!m) {
    throw new Error(`no ${path} link in the mail "${mail.subject}"`);
  }
  return m[0];
}
