import { and, eq, inArray, isNull } from "drizzle-orm";
import { memberships, ssoDomainProofs, tenants, users } from "../../../schema/pg/schema.js";
import { configOf } from "../../shared/config.js";
import type { Db } from "../db.js";
import { sendMail } from "../mail/smtp.js";
import { recordName, recordValue } from "./domains.js";

// The notice to owners whose domains migration 0018 made pending (they routed sign-ins before domains
// had to be proven, and stopped routing at the migration): one mail per studio to each of its owners,
// naming each domain's TXT record and the page that verifies it. Sent by the cron (index.ts), once:
// `noticedAt` is set when every owner's mail went out; a failed send is tried again on the next run.
// The studio's Single sign-on page says the same in a banner until the domains are verified.

export function domainNoticeMail(
  to: string,
  tenantName: string,
  records: { domain: string; name: string; value: string }[],
  page: string,
) {
  const list = records.map((r) => `  ${r.domain}: TXT record ${r.name} = ${r.value}`).join("\n");
  return {
    to,
    subject: `Action needed: prove your single sign-on domains for ${tenantName}`,
    text: `Single sign-on for "${tenantName}" now sends people to your identity provider only from email
domains the studio has proven it owns. Until you prove them, people with these addresses sign in with
a password (or set one with "Forgot your password?"):

${list}

Publish each TXT record in the domain's DNS, then press Verify on the studio's Single sign-on page:
${page}

You get this mail because you are an owner of the studio.
`,
  };
}

/** Domain rows a cron run notices at most; a one-off backlog drains over a few runs. */
export const NOTICES_PER_RUN = 50;

/** Sends the notices due; how many studios were noticed. */
export async function noticeUnprovenDomains(env: Env, db: Db): Promise<number> {
  const due = await db
    .select({
      tenantId: ssoDomainProofs.tenantId,
      tenantName: tenants.name,
      domain: ssoDomainProofs.domain,
      token: ssoDomainProofs.token,
    })
    .from(ssoDomainProofs)
    .innerJoin(tenants, eq(tenants.id, ssoDomainProofs.tenantId))
    .where(
      and(
        eq(ssoDomainProofs.noticeDue, true),
        isNull(ssoDomainProofs.noticedAt),
        isNull(ssoDomainProofs.verifiedAt),
      ),
    )
    .orderBy(ssoDomainProofs.tenantId, ssoDomainProofs.domain)
    // Bounded per cron run (each owner is one SMTP exchange): the rest go out on the next runs.
    .limit(NOTICES_PER_RUN);
  const byTenant = new Map<string, typeof due>();
  for (const row of due) {
    byTenant.set(row.tenantId, [...(byTenant.get(row.tenantId) ?? []), row]);
  }
  const origin = configOf(env).APP_URL.replace(/\/$/, "");
  let noticed = 0;
  for (const [tenantId, rows] of byTenant) {
    const owners = await db
      .select({ email: users.email })
      .from(memberships)
      .innerJoin(users, eq(users.id, memberships.userId))
      .where(and(eq(memberships.tenantId, tenantId), eq(memberships.role, "owner")));
    const records = rows.map((r) => ({
      domain: r.domain,
      name: recordName(r.domain),
      value: recordValue(r.token),
    }));
    const page = `${origin}/settings/studios/${tenantId}/sso`;
    let allSent = true;
    for (const owner of owners) {
      const outcome = await sendMail(
        env,
        domainNoticeMail(owner.email, rows[0]?.tenantName ?? "", records, page),
      );
      allSent &&= outcome.sent;
    }
    if (allSent) {
      await db
        .update(ssoDomainProofs)
        .set({ noticedAt: new Date() })
        .where(
          and(
            eq(ssoDomainProofs.tenantId, tenantId),
            inArray(
              ssoDomainProofs.domain,
              rows.map((r) => r.domain),
            ),
          ),
        );
      noticed++;
    }
  }
  return noticed;
}
