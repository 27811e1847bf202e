// Bootstrap CLI: tenants, projects, keys, tokens, users, OAuth clients. JSON on stdout, one object per command.
// With no DATABASE_URL it uses the local stack's database, starting embedded Postgres if it is down.
// A change the Workers may hold in their credential caches (a revoked key, a new project) is announced
// to the API Worker once committed (scripts/admin/announce.ts): OPERATOR_API_URL and OPERATOR_SECRET,
// by default those of the `npm run dev` running on this checkout's data (PORT picks which stack, as for
// `npm run dev`: the stack writes its address into its data dir). Exit codes: 0 done, 1 failed, 2 bad usage, 3 committed but not announced.
import { parseArgs } from "node:util";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import { AnnounceFailed, announce, targetFromEnv } from "./admin/announce.js";
import { run } from "./admin/commands.js";
import { localDatabase, runningStack } from "./local/database.js";

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      name: { type: "string" },
      plan: { type: "string" },
      tenant: { type: "string" },
      project: { type: "string" },
      preset: { type: "string" },
      id: { type: "string" },
      scopes: { type: "string" },
      ttl: { type: "string" },
      email: { type: "string" },
      password: { type: "string" },
      role: { type: "string" },
      "redirect-uri": { type: "string", multiple: true },
    },
  });
  let database: Awaited<ReturnType<typeof localDatabase>>;
  try {
    database = await localDatabase();
  } catch (err) {
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
    return;
  }
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  let ending = false;
  // An idle connection's error (Postgres stopping under it: 57P01 when the CLI closes the Postgres it
  // started while pool.end() is still closing that socket) concerns no command; unhandled, it would crash
  // the process after a committed change and turn exit 0 into 1. Work in flight still rejects its query.
  pool.on("error", (err) => {
    if (!ending) {
      process.stderr.write(`warning: idle database connection: ${err.message}\n`);
    }
  });
  try {
    const { "redirect-uri": redirectUris = [], ...single } = values;
    const { result, change } = await run(drizzle({ client: pool }), positionals, single, redirectUris);
    process.stdout.write(`${JSON.stringify(result)}\n`);
    if (change) {
      await announce(targetFromEnv(process.env, (await runningStack())?.url), change);
    }
  } catch (err) {
    if (err instanceof AnnounceFailed) {
      process.stderr.write(
        `error: the change is committed, but the Workers could not be told: ${err.message}.\n` +
          "Until told, they may keep using what they cached for up to the credential cache TTL (15 s by default).\n" +
          "Set OPERATOR_API_URL and OPERATOR_SECRET to the API Worker's address and operator secret.\n",
      );
      process.exitCode = 3;
      return;
    }
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  } finally {
    ending = true;
    await pool.end();
    await database.close();
  }
}

await main();
// The code main() set is the process's: nothing a dependency hooks on the way out gets to change it
// (embedded Postgres's exit hook once turned a failure beside a running stack into 0; postgres.ts).
process.exit(process.exitCode ?? 0);
