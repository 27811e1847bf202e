import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { createClient } from "@clickhouse/client-web";
import { windowOf } from "../../workers/api/window.js";
import { readBy } from "./rows-read.js";
import { withBenchStack } from "./stack.js";

const SQLS = (process.env.PROBE ?? "").split("|||");
await withBenchStack("probe", async ({ stack, dir }) => {
  const saved = JSON.parse(await readFile(join(dir, "bench-analytics.json"), "utf8")) as { projectId: string };
  const ch = createClient({ url: stack.clickhouse.url, username: stack.clickhouse.user, password: stack.clickhouse.password, request_timeout: 600_000 });
  const w = windowOf(30, Date.now());
  const params = { projectId: saved.projectId, builds: ["1.24", "1.25"], from: w.from, to: w.to, retainedFrom: w.retainedFrom };
  for (const sql of SQLS) {
    for (let i = 0; i < 2; i++) {
      const t0 = performance.now();
      let out: unknown;
      const r = await readBy(ch, async () => {
        const rs = await ch.query({ query: sql, query_params: params, format: "JSONEachRow" });
        out = await rs.json();
      });
      console.log(Math.round(performance.now() - t0), "ms", r.rows, "rows", (r.bytes / 1e6).toFixed(0), "MB", JSON.stringify(out).slice(0, 200));
    }
  }
  await ch.close();
});
