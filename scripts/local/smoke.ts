// End-to-end check of the local engines: client-web against the chdb-backed
// ClickHouse endpoint, and the Neon driver through the proxy to embedded
// Postgres. Run: node --import tsx scripts/local/smoke.ts
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { type ClickHouseClient, ClickHouseError, createClient, SettingsMap } from "@clickhouse/client-web";
import { neon, neonConfig, Pool } from "@neondatabase/serverless";
import WebSocket from "ws";
import { clickhouseQuery, startClickHouseHttp } from "./clickhouse-http.js";
import { startNeonProxy } from "./neon-proxy.js";
import { startPostgres } from "./postgres.js";

const CH_USER = "smoke";
const CH_PASSWORD = "smoke-secret";
let failures = 0;

async function check(name: string, test: () => Promise<void>): Promise<void> {
  try {
    await test();
    console.log(`PASS ${name}`);
  } catch (err) {
    failures++;
    console.log(`FAIL ${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function assert(condition: boolean, message: string): void {
  if (!condition) {
    throw new Error(message);
  }
}

function assertEqual(actual: unknown, expected: unknown, what: string): void {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  assert(a === e, `${what}: expected ${e}, got ${a}`);
}

/** Runs `work`, which must fail with a ClickHouseError carrying `code`. */
async function expectClickHouseError(code: string, work: () => Promise<unknown>): Promise<ClickHouseError> {
  try {
    await work();
  } catch (err) {
    assert(err instanceof ClickHouseError, `expected ClickHouseError, got ${String(err)}`);
    const chError = err as ClickHouseError;
    assertEqual(chError.code, code, `error code (${chError.message})`);
    return chError;
  }
  throw new Error(`expected ClickHouse error ${code}, but the request succeeded`);
}

async function rows<T>(client: ClickHouseClient, query: string, extra: object = {}): Promise<T[]> {
  const result = await client.query({ query, format: "JSONEachRow", ...extra });
  return result.json<T>();
}

const EVENTS = [
  {
    project_id: "proj-a",
    event_id: "61f0c404-5cb3-11e7-907b-a6006ad3dba0",
    tags: ["x", "it's"],
    ts: "2024-01-01 00:00:00.000",
    n: 1,
  },
  {
    project_id: "proj-a",
    event_id: "61f0c404-5cb3-11e7-907b-a6006ad3dba1",
    tags: ["y"],
    ts: "2024-01-02 00:00:00.500",
    n: 2,
  },
  {
    project_id: "pro'j\tb\\",
    event_id: "61f0c404-5cb3-11e7-907b-a6006ad3dba2",
    tags: ["x"],
    ts: "2024-01-03 00:00:00.000",
    n: 3,
  },
];

async function clickhouseChecks(url: string): Promise<void> {
  const client = createClient({ url, username: CH_USER, password: CH_PASSWORD });

  await check("ping", async () => {
    assert((await client.ping()).success, "ping failed");
  });

  await check("create database and MergeTree table", async () => {
    await client.command({ query: "CREATE DATABASE IF NOT EXISTS telemetry" });
    await client.command({
      query: `CREATE TABLE telemetry.events (project_id String, event_id UUID, tags Array(String),
        ts DateTime64(3, 'UTC'), n UInt32) ENGINE = MergeTree ORDER BY (project_id, ts)
        SETTINGS non_replicated_deduplication_window = 100`,
      clickhouse_settings: { max_execution_time: 10 },
    });
  });

  await check("insert with insert_deduplication_token (same token, other rows: deduplicated)", async () => {
    const insert = (values: object[], token: string) =>
      client.insert({
        table: "telemetry.events",
        values,
        format: "JSONEachRow",
        clickhouse_settings: { insert_deduplication_token: token },
      });
    await insert(EVENTS, "t1");
    await insert([EVENTS[0] as object], "t1");
    const [count] = await rows<{ c: number | string }>(client, "SELECT count() AS c FROM telemetry.events");
    assertEqual(Number(count?.c), 3, "row count");
  });

  await check("query_params String, UUID, Array(String), DateTime64(3)", async () => {
    const found = await rows<{ n: number }>(
      client,
      `SELECT n FROM telemetry.events WHERE project_id = {p:String} AND event_id != {id:UUID}
        AND hasAny(tags, {tags:Array(String)}) AND ts >= {since:DateTime64(3)} ORDER BY n`,
      {
        query_params: {
          p: "proj-a",
          id: EVENTS[1]?.event_id,
          tags: ["it's", "nope"],
          since: new Date("2023-12-31T23:59:59.999Z"),
        },
      },
    );
    assertEqual(found, [{ n: 1 }], "matching rows");
  });

  await check("query_params round-trip quotes, tabs, backslashes, newlines", async () => {
    const s = "a'b\tc\\d\ne";
    const a = ["x'y", "tab\there", "back\\slash", ""];
    const [echo] = await rows<{ s: string; a: string[]; p: number }>(
      client,
      "SELECT {s:String} AS s, {a:Array(String)} AS a, toUInt8(count()) AS p FROM telemetry.events WHERE project_id = {q:String}",
      { query_params: { s, a, q: EVENTS[2]?.project_id } },
    );
    assertEqual(echo, { s, a, p: 1 }, "echo");
  });

  await check("readonly=1 allows SELECT and rejects INSERT", async () => {
    await rows(client, "SELECT 1", { clickhouse_settings: { readonly: "1" } });
    await expectClickHouseError("164", () =>
      client.insert({
        table: "telemetry.events",
        values: [EVENTS[0]],
        format: "JSONEachRow",
        clickhouse_settings: { readonly: "1" },
      }),
    );
  });

  await check("max_result_rows with result_overflow_mode=break truncates", async () => {
    const settings = { max_result_rows: "10", result_overflow_mode: "break", max_block_size: "10" } as const;
    const numbers = await rows(client, "SELECT number FROM numbers(100000)", {
      clickhouse_settings: settings,
    });
    assert(numbers.length >= 10 && numbers.length < 100, `got ${numbers.length} rows`);
    await expectClickHouseError("396", () =>
      rows(client, "SELECT number FROM numbers(1000)", { clickhouse_settings: { max_result_rows: "10" } }),
    );
  });

  await check("additional_table_filters filters rows", async () => {
    // SettingsMap does not escape, so quotes inside a filter are doubled by hand.
    const filters = SettingsMap.from({ "telemetry.events": "project_id = ''proj-a''" });
    const filtered = await rows<{ project_id: string }>(client, "SELECT project_id FROM telemetry.events", {
      clickhouse_settings: { additional_table_filters: filters },
    });
    assertEqual(
      filtered.map((r) => r.project_id),
      ["proj-a", "proj-a"],
      "projects",
    );
  });

  await check("max_execution_time times out SELECT sleep(2)", async () => {
    await expectClickHouseError("159", () =>
      client.query({ query: "SELECT sleep(2)", clickhouse_settings: { max_execution_time: 0.5 } }),
    );
  });

  await check("wait_end_of_query=0 streams a large result; a failure midway cuts the transfer", async () => {
    const streamed = await client.exec({
      query: "SELECT number FROM numbers({n:UInt32}) FORMAT CSV",
      query_params: { n: 300_000 },
      clickhouse_settings: { wait_end_of_query: 0 },
    });
    let lines = 0;
    for await (const chunk of streamed.stream) {
      lines += chunk.reduce((n: number, b: number) => n + (b === 10 ? 1 : 0), 0);
    }
    assertEqual(lines, 300_000, "streamed lines");
    const failing = await client.exec({
      query: "SELECT throwIf(number = 250000, 'midway') FROM numbers(300000) FORMAT CSV",
      clickhouse_settings: { wait_end_of_query: 0, max_block_size: "10000" },
    });
    let broken = false;
    try {
      for await (const _ of failing.stream) {
        // drain
      }
    } catch {
      broken = true;
    }
    assert(broken, "a stream that failed midway must not end cleanly");
  });

  await check("errors parse into ClickHouseError with code and type", async () => {
    const err = await expectClickHouseError("62", () =>
      client.query({ query: "SELEC 1", format: "JSONEachRow" }),
    );
    assertEqual(err.type, "SYNTAX_ERROR", "type");
    const unknown = await expectClickHouseError("60", () =>
      client.query({ query: "SELECT * FROM telemetry.nope" }),
    );
    assertEqual(unknown.type, "UNKNOWN_TABLE", "type");
  });

  await check("wrong password is AUTHENTICATION_FAILED", async () => {
    const intruder = createClient({ url, username: CH_USER, password: "wrong" });
    await expectClickHouseError("516", () => intruder.query({ query: "SELECT 1" }));
  });

  await check("multipart params and foreign databases are refused, not ignored", async () => {
    await expectClickHouseError("48", () =>
      client.query({ query: "SELECT {a:String}", query_params: { a: "x" }, use_multipart_params: true }),
    );
    const other = createClient({ url, username: CH_USER, password: CH_PASSWORD, database: "telemetry" });
    await expectClickHouseError("48", () => other.query({ query: "SELECT 1" }));
  });

  await check("20 concurrent queries (with and without params)", async () => {
    const started = Date.now();
    const plain = Array.from({ length: 20 }, (_, i) =>
      rows<{ i: string }>(client, `SELECT ${i} AS i, sleep(0.2) AS s`),
    );
    const bound = Array.from({ length: 20 }, (_, i) =>
      rows<{ i: number }>(client, "SELECT {i:UInt8} AS i", { query_params: { i } }),
    );
    const [plainRows, boundRows] = await Promise.all([Promise.all(plain), Promise.all(bound)]);
    assertEqual(
      plainRows.map((r) => Number(r[0]?.i)),
      [...Array(20).keys()],
      "plain results",
    );
    assertEqual(
      boundRows.map((r) => r[0]?.i),
      [...Array(20).keys()],
      "bound results",
    );
    console.log(`     (40 queries in ${Date.now() - started} ms)`);
  });

  await check("gzip request body and clickhouseQuery helper", async () => {
    const response = await fetch(url, {
      method: "POST",
      body: gzipSync("SELECT count() FROM telemetry.events"),
      headers: { "Content-Encoding": "gzip", "X-ClickHouse-User": CH_USER, "X-ClickHouse-Key": CH_PASSWORD },
    });
    assertEqual(await response.text(), "3\n", "gzip result");
    const text = await clickhouseQuery(url, { user: CH_USER, password: CH_PASSWORD }, "SELECT {x:String}", {
      x: "hi",
    });
    assertEqual(text, "hi\n", "helper result");
  });

  await check(
    "enable_http_compression=1 with Accept-Encoding gzip: a gzip'd response, buffered and streamed",
    async () => {
      for (const wait of ["1", "0"]) {
        const response = await fetch(`${url}/?enable_http_compression=1&wait_end_of_query=${wait}`, {
          method: "POST",
          body: "SELECT number FROM numbers(3) FORMAT JSONCompact",
          headers: {
            "Accept-Encoding": "gzip",
            "X-ClickHouse-User": CH_USER,
            "X-ClickHouse-Key": CH_PASSWORD,
          },
        });
        assertEqual(
          response.headers.get("content-encoding"),
          "gzip",
          `content-encoding (wait_end_of_query=${wait})`,
        );
        // fetch inflates it; the rows are what ClickHouse sends.
        const body = JSON.parse(await response.text()) as { data: unknown[][] };
        assertEqual(body.data, [[0], [1], [2]], `rows (wait_end_of_query=${wait})`);
      }
      // Without the setting, or without gzip accepted, the body is left as it is.
      const plain = await fetch(`${url}/?enable_http_compression=0`, {
        method: "POST",
        body: "SELECT 1",
        headers: { "Accept-Encoding": "gzip", "X-ClickHouse-User": CH_USER, "X-ClickHouse-Key": CH_PASSWORD },
      });
      assertEqual(plain.headers.get("content-encoding"), null, "no content-encoding");
      assertEqual(await plain.text(), "1\n", "plain body");
      // And the client's own compression option goes through it end to end.
      const compressed = createClient({
        url,
        username: CH_USER,
        password: CH_PASSWORD,
        compression: { response: true },
      });
      assertEqual(
        await rows(compressed, "SELECT 41 + 1 AS n"),
        [{ n: 42 }],
        "client with response compression",
      );
      await compressed.close();
    },
  );

  await client.close();
}

async function neonChecks(databaseUrl: string, proxyPort: number): Promise<void> {
  neonConfig.webSocketConstructor = WebSocket;
  neonConfig.wsProxy = (host, port) => `127.0.0.1:${proxyPort}/?address=${host}:${port}`;
  neonConfig.useSecureWebSocket = false;
  neonConfig.pipelineTLS = false;
  neonConfig.pipelineConnect = false;
  const pool = new Pool({ connectionString: databaseUrl });

  await check("neon Pool: select 1", async () => {
    const result = await pool.query("SELECT 1 AS one");
    assertEqual(result.rows, [{ one: 1 }], "rows");
  });

  await check("neon Pool: interactive transaction with BEGIN/COMMIT (and ROLLBACK)", async () => {
    await pool.query("CREATE TABLE IF NOT EXISTS smoke_tx (id int PRIMARY KEY)");
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query("INSERT INTO smoke_tx VALUES (1)");
      await client.query("COMMIT");
      await client.query("BEGIN");
      await client.query("INSERT INTO smoke_tx VALUES (2)");
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    const result = await pool.query("SELECT id FROM smoke_tx ORDER BY id");
    assertEqual(result.rows, [{ id: 1 }], "committed rows");
  });

  await check(
    "neon HTTP query path (POST /sql): params, types, statement errors, batches in one transaction",
    async () => {
      neonConfig.fetchEndpoint = `http://127.0.0.1:${proxyPort}/sql`;
      const sql = neon(databaseUrl);
      const rows = await sql.query("SELECT $1::int + 1 AS n, now() AS at, NULL::text AS none", [41]);
      assertEqual(rows[0]?.n, 42, "int parsed");
      assert(rows[0]?.at instanceof Date, "timestamptz parsed into a Date");
      assertEqual(rows[0]?.none, null, "null");
      const failed = await sql.query("SELECT * FROM no_such_table").catch((err: unknown) => err);
      assertEqual(Reflect.get(Object(failed), "code"), "42P01", "SQLSTATE of a statement error");
      const [inserted, counted] = await sql.transaction([
        sql.query("INSERT INTO smoke_tx VALUES (10) RETURNING id"),
        sql.query("SELECT count(*)::int AS n FROM smoke_tx WHERE id = 10"),
      ]);
      assertEqual(inserted, [{ id: 10 }], "batch insert");
      assertEqual(counted, [{ n: 1 }], "batch sees its own insert");
      // A failing batch changes nothing.
      await sql
        .transaction([sql.query("INSERT INTO smoke_tx VALUES (11)"), sql.query("SELECT 1/0")])
        .catch(() => {});
      assertEqual(
        await sql.query("SELECT count(*)::int AS n FROM smoke_tx WHERE id = 11"),
        [{ n: 0 }],
        "rolled back",
      );
      const foreign = await fetch(`http://127.0.0.1:${proxyPort}/sql`, {
        method: "POST",
        headers: {
          "Neon-Connection-String": "postgres://u:p@example.com:5432/db",
          "Neon-Raw-Text-Output": "true",
          "Neon-Array-Mode": "true",
        },
        body: JSON.stringify({ query: "SELECT 1", params: [] }),
      });
      assertEqual(foreign.status, 400, "a non-loopback target is refused");
    },
  );

  await check("proxy refuses hosts outside allowedHosts", async () => {
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`ws://127.0.0.1:${proxyPort}/?address=example.com:5432`);
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => resolve(101));
      ws.on("error", () => {});
    });
    assertEqual(status, 403, "upgrade status");
  });

  await pool.end();
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), "local-smoke-"));
  // When run as root, Postgres runs as the 'postgres' user and must be able to
  // enter the temp directory.
  await chmod(root, 0o755);
  const closers: Array<() => Promise<void>> = [];
  try {
    const [clickhouse, postgres, proxy] = await Promise.all([
      startClickHouseHttp({ dataDir: join(root, "clickhouse"), user: CH_USER, password: CH_PASSWORD }),
      startPostgres({ dataDir: join(root, "postgres") }),
      startNeonProxy(),
    ]);
    closers.push(clickhouse.close, postgres.close, proxy.close);
    await check("second ClickHouse server in one process is refused", async () => {
      const second = startClickHouseHttp({ dataDir: join(root, "other"), user: "u", password: "p" });
      await second.then(
        () => assert(false, "second server started"),
        (err: Error) => assert(err.message.includes("one data directory per process"), err.message),
      );
    });
    await clickhouseChecks(clickhouse.url);
    await neonChecks(postgres.url, proxy.port);
  } finally {
    for (const close of closers.reverse()) {
      await close().catch((err) => console.log(`FAIL shutdown: ${String(err)}`));
    }
    await rm(root, { recursive: true, force: true });
  }
  console.log(failures === 0 ? "ALL PASS" : `${failures} FAILED`);
  process.exitCode = failures === 0 ? 0 : 1;
}

await main();
