import { eq } from "drizzle-orm";
import {
  oauthClients,
  oauthGrants,
  oauthRefreshTokens,
  oauthTokens,
  users,
} from "../../../schema/pg/schema.js";
import { sha256Hex } from "../../shared/credentials/secrets.js";
import type { Db } from "../db.js";
import type { AuditActor, AuditTarget } from "./record.js";

/** A grant as the audit log names it: its client acting for its user, in its studio. */
export type GrantParties = { tenantId: string; actor: AuditActor; target: AuditTarget };

function parties(row: {
  grantId: string;
  tenantId: string;
  clientId: string;
  clientName: string;
  userId: string;
  email: string;
}): GrantParties {
  return {
    tenantId: row.tenantId,
    actor: {
      type: "oauth_client",
      id: row.clientId,
      label: `${row.clientName} (${row.email})`,
      userId: row.userId,
    },
    target: { type: "grant", id: row.grantId, label: `${row.clientName} (${row.email})` },
  };
}

const grantColumns = {
  grantId: oauthGrants.id,
  tenantId: oauthGrants.tenantId,
  clientId: oauthClients.id,
  clientName: oauthClients.name,
  userId: users.id,
  email: users.email,
};

/** The grant a token (access `gto_…` or refresh `gtr_…`) belongs to, by the token's hash; null if none. */
export async function grantOfToken(db: Db, token: string): Promise<GrantParties | null> {
  const hash = await sha256Hex(token);
  const [access] = await db
    .select(grantColumns)
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .innerJoin(users, eq(users.id, oauthGrants.userId))
    .where(eq(oauthTokens.tokenHash, hash))
    .limit(1);
  if (access) {
    return parties(access);
  }
  const [refresh] = await db
    .select(grantColumns)
    .from(oauthRefreshTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthRefreshTokens.grantId))
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .innerJoin(users, eq(users.id, oauthGrants.userId))
    .where(eq(oauthRefreshTokens.tokenHash, hash))
    .limit(1);
  return refresh ? parties(refresh) : null;
}

/** The grant by id; null if none. */
export async function grantById(db: Db, grantId: string): Promise<GrantParties | null> {
  const [row] = await db
    .select(grantColumns)
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .innerJoin(users, eq(users.id, oauthGrants.userId))
    .where(eq(oauthGrants.id, grantId))
    .limit(1);
  return row ? parties(row) : null;
}
