import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { buildClient } from "../scripts/build-client.js";
import { startMailCatcher } from "../scripts/local/mail.js";
import { startLocalStack } from "../scripts/local/stack.js";
import { startDohServer } from "./support/doh-server.js";
import { startHookReceiver } from "./support/hook-receiver.js";
import { buildIngestWorker } from "./support/ingest-worker.js";
import { startOidcIdp } from "./support/oidc-idp.js";
import { type SdkFixtures, sdkFixtures } from "./support/sdk-fixtures.js";

declare module "vitest" {
  export interface ProvidedContext {
    databaseUrl: string;
    clickhouseUrl: string;
    clickhouseUser: string;
    clickhousePassword: string;
    neonProxy: string;
    /** Loopback webhook receiver: POST records, GET /received?path= reads back. */
    hookUrl: string;
    /** The test OpenID provider's issuer (oidc-provider on loopback); drive it with idpControl(). */
    idpUrl: string;
    /** The test DNS-over-HTTPS resolver (the Worker's SSO_DNS_RESOLVER); drive it with dohControl(). */
    dohUrl: string;
    /** The mail catcher the Worker sends to (SMTP) and tests read (its REST API under inboxUrl). */
    smtpPort: number;
    inboxUrl: string;
    /** SDK-layout batches encoded in Node by protobufjs (workerd refuses its generated codecs). */
    sdkFixtures: SdkFixtures;
  }
}

/** Real engines for the whole run: a fresh embedded Postgres and chdb in a temp dir, migrated. */
export default async function setup(project: TestProject) {
  // The ingest Worker runs from its deploy bundle (vitest.config.ts), so build it before workerd starts.
  buildIngestWorker();
  // The API Worker (the pool's main Worker) imports the dashboard's browser bundle as a module.
  buildClient();
  const dataDir = await mkdtemp(join(tmpdir(), "telemetry-test-"));
  // As root, embedded Postgres runs as the postgres user, which must be able to enter the directory.
  await chmod(dataDir, 0o755);
  const stack = await startLocalStack({ dataDir });
  project.provide("databaseUrl", stack.databaseUrl);
  project.provide("clickhouseUrl", stack.clickhouse.url);
  project.provide("clickhouseUser", stack.clickhouse.user);
  project.provide("clickhousePassword", stack.clickhouse.password);
  project.provide("neonProxy", stack.neonProxy);
  const mail = await startMailCatcher({ dir: join(dataDir, "mail") });
  project.provide("smtpPort", mail.smtpPort);
  project.provide("inboxUrl", mail.inboxUrl);
  const hooks = await startHookReceiver();
  project.provide("hookUrl", hooks.url);
  const idp = await startOidcIdp();
  project.provide("idpUrl", idp.issuer);
  const doh = await startDohServer();
  project.provide("dohUrl", doh.url);
  project.provide("sdkFixtures", sdkFixtures());
  return async () => {
    await doh.close();
    await idp.close();
    await hooks.close();
    await mail.close();
    await stack.close();
    await rm(dataDir, { recursive: true, force: true });
  };
}
