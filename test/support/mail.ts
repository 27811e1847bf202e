// Reads mail from the catcher (maildev's REST API) as a person would read their inbox: the newest mail
// to an address (maildev lists mail in arrival order), polled until it arrives.

type Caught = { id: string; subject: string; text?: string; time: string; to: Array<{ address: string }> };

export type ReceivedMail = { subject: string; text: string };

/** The newest mail to `to` whose subject matches, waiting up to `timeoutMs` for it to arrive. */
export async function mailTo(
  inboxUrl: string,
  to: string,
  subject: RegExp = /./,
  timeoutMs = 15_000,
): Promise<ReceivedMail> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${inboxUrl}/api/email`);
    const all = (await res.json()) as Caught[];
    const mine = all
      .filter(
        (m) => m.to.some((t) => t.address.toLowerCase() === to.toLowerCase()) && subject.test(m.subject),
      )
      .reverse();
    const newest = mine[0];
    if (newest) {
      return { subject: newest.subject, text: newest.text ?? "" };
    }
    if (Date.now() > deadline) {
      throw new Error(`no mail to ${to} matching ${subject} within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
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
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mails = await mailsTo(inboxUrl, to);
    if (mails.length >= count) {
      return mails;
    }
    if (Date.now() > deadline) {
      throw new Error(`${mails.length} mails to ${to}, not ${count}, within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
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
