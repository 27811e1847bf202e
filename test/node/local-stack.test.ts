import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { expect, it } from "vitest";
import { TelemetryBatchSchema } from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { perfEvents } from "../support/dashboard.js";
import { adminCli } from "../support/service.js";
import { sharedService } from "../support/shared-service.js";
import { waitFor } from "../support/wait.js";

// The service as `npm run dev` runs it, under the Node running this test: embedded Postgres migrated,
// chdb behind the ClickHouse HTTP interface, the mail catcher and `wrangler dev` with both Workers, set
// up with the admin CLI and used over HTTP as a game and a client would. `.ci/run` runs it on each Node
// LTS line; the browser tests drive this same service in Chromium, which no Node version changes.

it("ingests a batch and answers it back on the local stack, set up by the admin CLI", async () => {
  const service = await sharedService();
  const admin = async (...args: string[]) => adminCli(service, ...args);
  const tenantId = String(
    (await admin("tenant", "create", "--name", "Local Stack Studio", "--plan", "pro")).id,
  );
  const projectId = String(
    (await admin("project", "create", "--tenant", tenantId, "--name", "Stack Run")).id,
  );
  const ingestKey = String((await admin("key", "create", "--project", projectId, "--preset", "ingest")).key);
  const fullKey = String((await admin("key", "create", "--project", projectId, "--preset", "full")).key);

  const health = await fetch(`${service.origin}/api/health`);
  expect(health.status).toBe(200);

  const events = perfEvents({
    count: 25,
    build: "1.0.0",
    mapId: "dock",
    at: (i) => ({ x: i, y: 1 }),
    fps: () => 60,
  });
  const sent = await fetch(`${service.origin}/v1/events`, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-protobuf",
      "Content-Encoding": "gzip",
      "X-SDK-Version": "local-stack-test/1.0",
      "X-API-Key": ingestKey,
    },
    body: gzipSync(toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { events }))),
  });
  expect(sent.status, await sent.text()).toBe(202);

  // Stored by the events queue's consumer shortly: read back as a client does, until it is there.
  const stored = await waitFor(
    async () => {
      const res = await fetch(`${service.origin}/api/v1/query`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-Key": fullKey },
        body: JSON.stringify({ project_id: projectId, sql: "SELECT count() AS n FROM events" }),
      });
      expect(res.status).toBe(200);
      const { data } = (await res.json()) as { data: { rows: Array<Record<string, unknown> | unknown[]> } };
      const row = data.rows[0];
      return Number(Array.isArray(row) ? row[0] : row?.n);
    },
    (n) => n >= events.length,
    { timeoutMs: 60_000, intervalMs: 250, message: `${events.length} events stored` },
  );
  expect(stored).toBe(events.length);
});
