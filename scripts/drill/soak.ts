// npm run soak: steady load on the local stack for SOAK_S seconds (default 600), watching memory
// (docs/operations.md, "Soak"). SOAK_CONCURRENCY ingest requests stay in flight (500-event batches, the
// SDK's retry policy) while one reader cycles the dashboard, a heatmap, the project status and the
// builds. Every SOAK_SAMPLE_S seconds (default 30) it prints the resident memory of each process of the
// stack; the last line is one JSON object with the totals and each process group's growth after the
// warm-up (SOAK_WARMUP_S, default 120).
import { readdir, readFile, readlink } from "node:fs/promises";
import { drizzle } from "drizzle-orm/node-postgres";
import pg from "pg";
import WebSocket from "ws";
import { createKey, createProject, createTenant } from "../../workers/api/bootstrap.js";
import { withBenchStack } from "../bench/stack.js";
import { clickhouseQuery } from "../local/clickhouse-http.js";
import { newTotals, sendWhile } from "./sender.js";

const SOAK_S = Number(process.env.SOAK_S ?? 600);
const SAMPLE_S = Number(process.env.SOAK_SAMPLE_S ?? 30);
const WARMUP_S = Number(process.env.SOAK_WARMUP_S ?? 120);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 4);
const EVENTS = Number(process.env.SOAK_EVENTS ?? 500);
const PORT = Number(process.env.SOAK_PORT ?? 8796);
const ORIGIN = `http://127.0.0.1:${PORT}`;

const log = (message: string) => process.stderr.write(`[soak] ${message}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function seed(databaseUrl: string) {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const db = drizzle({ client: pool });
    const tenant = await createTenant(db, "Soak Studio", "enterprise");
    const project = await createProject(db, tenant.id, "Soak Game");
    const ingest = await createKey(db, project.id, "ingest");
    const read = await createKey(db, project.id, "read");
    const admin = await createKey(db, project.id, "full");
    return { projectId: project.id, ingestKey: ingest.key, readKey: read.key, adminKey: admin.key };
  } finally {
    await pool.end();
  }
}

type Proc = { pid: number; ppid: number; comm: string; cmdline: string; rssKb: number };

async function processes(): Promise<Proc[]> {
  const out: Proc[] = [];
  for (const name of await readdir("/proc")) {
    if (!/^\d+$/.test(name)) {
      continue;
    }
    try {
      const status = await readFile(`/proc/${name}/status`, "utf8");
      const cmdline = (await readFile(`/proc/${name}/cmdline`, "utf8")).replaceAll("\0", " ");
      const field = (k: string) => new RegExp(`^${k}:\\s+(\\S+)`, "m").exec(status)?.[1] ?? "";
      out.push({
        pid: Number(name),
        ppid: Number(field("PPid")),
        comm: field("Name"),
        cmdline,
        rssKb: Number(field("VmRSS") || 0),
      });
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

/**
 * Resident memory (MB) of this process and everything under it, by group: workerd (the Workers, their
 * DOs and Miniflare's queues), wrangler (its node process), postgres (every backend), and this node
 * process, which also hosts chdb and the Neon proxy.
 */
async function memoryByGroup(): Promise<Record<string, number>> {
  const all = await processes();
  const children = new Map<number, Proc[]>();
  for (const p of all) {
    children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  }
  const groups: Record<string, number> = {};
  const visit = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      const group =
        child.comm === "workerd"
          ? "workerd"
          : child.comm.startsWith("postgres")
            ? "postgres"
            : child.cmdline.includes("wrangler")
              ? "wrangler"
              : child.comm;
      groups[group] = (groups[group] ?? 0) + child.rssKb / 1024;
      visit(child.pid);
    }
  };
  visit(process.pid);
  groups["node (soak, chdb, proxy)"] = process.memoryUsage().rss / 1024 / 1024;
  return Object.fromEntries(Object.entries(groups).map(([k, v]) => [k, Math.round(v)]));
}

/** The loopback ports a process listens on (from /proc: its socket inodes, matched in /proc/net/tcp). */
async function listeningPorts(pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const fd of await readdir(`/proc/${pid}/fd`).catch(() => [])) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m?.[1]) {
      inodes.add(m[1]);
    }
  }
  const ports: number[] = [];
  for (const line of (await readFile("/proc/net/tcp", "utf8")).split("\n").slice(1)) {
    const cols = line.trim().split(/\s+/);
    // local_address is HEX_IP:HEX_PORT, st 0A is LISTEN, the inode is the tenth column.
    if (cols[3] === "0A" && inodes.has(cols[9] ?? "")) {
      ports.push(Number.parseInt(cols[1]?.split(":")[1] ?? "0", 16));
    }
  }
  return ports;
}

type Target = { id: string; webSocketDebuggerUrl: string };

/** The inspector targets (one per isolate) of the workerd that runs the Workers under this process. */
async function inspectorTargets(): Promise<Target[]> {
  const all = await processes();
  const mine = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (mine.has(p.ppid) && !mine.has(p.pid)) {
        mine.add(p.pid);
        grew = true;
      }
    }
  }
  for (const p of all) {
    if (!mine.has(p.pid) || p.comm !== "workerd" || !p.cmdline.includes("--inspector-addr")) {
      continue;
    }
    for (const port of await listeningPorts(p.pid)) {
      const list = await fetch(`http://127.0.0.1:${port}/json/list`, { signal: AbortSignal.timeout(2000) })
        .then((r) => (r.ok ? (r.json() as Promise<Target[]>) : null))
        .catch(() => null);
      if (Array.isArray(list) && list.length > 0) {
        return list;
      }
    }
  }
  return [];
}

type Reply = { id?: number; result?: { usedSize: number } };

/** One isolate's JS heap in use (MB) right after a forced full GC; undefined when it does not answer. */
function heapAfterGc(target: Target): Promise<number | undefined> {
  return new Promise((resolve) => {
    const ws = new WebSocket(target.webSocketDebuggerUrl);
    const timer = setTimeout(() => {
      ws.terminate();
      resolve(undefined);
    }, 20_000);
    let id = 0;
    const waiting = new Map<number, (reply: Reply) => void>();
    const send = (method: string) =>
      new Promise<Reply>((r) => {
        id++;
        waiting.set(id, r);
        ws.send(JSON.stringify({ id, method }));
      });
    ws.on("message", (data) => {
      const reply = JSON.parse(String(data)) as Reply;
      if (reply.id !== undefined) {
        waiting.get(reply.id)?.(reply);
        waiting.delete(reply.id);
      }
    });
    ws.on("error", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    ws.on("open", async () => {
      await send("HeapProfiler.collectGarbage");
      const usage = await send("Runtime.getHeapUsage");
      clearTimeout(timer);
      ws.close();
      resolve(usage.result ? Math.round(usage.result.usedSize / 1048576) : undefined);
    });
  });
}

/**
 * Our isolates' JS heaps in use (MB) right after a forced full GC, through workerd's inspector: what
 * our code keeps alive (caches, maps, Durable Object state) apart from garbage not yet collected and
 * from memory outside the JS heaps (SQLite, sockets, the runtime itself). The queue broker's isolates
 * are Miniflare's.
 */
async function heapsAfterGc(): Promise<Record<string, number>> {
  const targets = (await inspectorTargets()).filter(
    (t) => t.id.startsWith("core:user:") || t.id.startsWith("queues:"),
  );
  const heaps: Record<string, number> = {};
  await Promise.all(
    targets.map(async (t) => {
      const mb = await heapAfterGc(t);
      if (mb !== undefined) {
        heaps[t.id.replace(/^core:user:/, "")] = mb;
      }
    }),
  );
  return heaps;
}

async function main() {
  return withBenchStack("soak", async ({ stack, serve }) => {
    const ch = stack.clickhouse;
    const { projectId, ingestKey, readKey, adminKey } = await seed(stack.databaseUrl);
    await serve(PORT, ORIGIN);

    const totals = newTotals();
    const readerAnswers: Record<string, number> = {};
    let running = true;
    const started = Date.now();
    const sending = sendWhile(
      ORIGIN,
      ingestKey,
      { concurrency: CONCURRENCY, events: EVENTS, pauseMs: 0, running: () => running },
      totals,
    );
    const reads = [
      `/api/v1/projects/${projectId}/dashboard?days=7`,
      `/api/v1/projects/${projectId}/heatmap?mapId=de_dust2&cellSize=25&days=7`,
      `/api/v1/projects/${projectId}/status`,
      `/api/v1/projects/${projectId}/builds?days=7`,
    ];
    const reading = (async () => {
      for (let i = 0; running; i++) {
        const path = reads[i % reads.length] as string;
        let status: string;
        try {
          const res = await fetch(`${ORIGIN}${path}`, { headers: { "X-API-Key": readKey } });
          await res.arrayBuffer();
          status = String(res.status);
        } catch {
          status = "network";
        }
        readerAnswers[status] = (readerAnswers[status] ?? 0) + 1;
      }
    })();

    const count = async (expr: string) =>
      Number(
        (
          await clickhouseQuery(
            ch.url,
            { user: ch.user, password: ch.password },
            `SELECT ${expr} FROM telemetry.events WHERE project_id = {p:UUID} FORMAT TSV`,
            { p: projectId },
          )
        ).trim() || 0,
      );
    // Every accepted event once, by (batch, index); count() is the cheap figure the samples use.
    const visible = () => count("uniqExact(batch_id, event_index)");
    const samples: Array<{
      t: number;
      mb: Record<string, number>;
      backlog: number;
      heaps: Record<string, number>;
    }> = [];
    for (;;) {
      const t = Math.round((Date.now() - started) / 1000);
      const mb = await memoryByGroup();
      // Accepted but not yet in ClickHouse: what the local queue holds (memory the simulator keeps).
      const backlog = totals.acceptedEvents - (await count("count()"));
      const heaps = await heapsAfterGc();
      samples.push({ t, mb, backlog, heaps });
      const rate = Math.round(totals.acceptedEvents / Math.max(1, t));
      log(
        `t=${String(t).padStart(4)} s  ${Object.entries(mb)
          .map(([k, v]) => `${k} ${v} MB`)
          .join(
            "  ",
          )}  accepted ${totals.acceptedEvents} events (${rate}/s), queue backlog ${backlog} events`,
      );
      log(
        `         JS heap after GC: ${Object.entries(heaps)
          .map(([k, v]) => `${k} ${v} MB`)
          .join("  ")}`,
      );
      if (t >= SOAK_S) {
        break;
      }
      await sleep(Math.min(SAMPLE_S, SOAK_S - t) * 1000);
    }
    running = false;
    await Promise.all([sending, reading]);
    const seconds = (Date.now() - started) / 1000;

    // Nothing accepted may be missing: wait for the queue to drain into ClickHouse.
    // count() (cheap) until every row could be there, then the exact figure once.
    const deadline = Date.now() + 300_000;
    while ((await count("count()")) < totals.acceptedEvents && Date.now() < deadline) {
      await sleep(2000);
    }
    const seen = await visible();
    // Accepted but not visible is either still being retried or parked as a dead letter (replayable).
    const parked = await fetch(`${ORIGIN}/api/v1/projects/${projectId}/dead-letters`, {
      headers: { "X-API-Key": adminKey },
    })
      .then((r) => r.json() as Promise<{ data?: unknown[] }>)
      .then((b) => b.data?.length ?? null)
      .catch(() => null);

    const base = samples.find((s) => s.t >= WARMUP_S) ?? samples[0];
    const last = samples[samples.length - 1];
    const growth: Record<string, { after_warmup_mb: number; last_mb: number; growth_pct: number }> = {};
    for (const [group, lastMb] of Object.entries(last?.mb ?? {})) {
      const from = base?.mb[group] ?? lastMb;
      growth[group] = {
        after_warmup_mb: from,
        last_mb: lastMb,
        growth_pct: Math.round(((lastMb - from) / Math.max(1, from)) * 1000) / 10,
      };
    }
    return {
      soak_s: Math.round(seconds),
      accepted_events: totals.acceptedEvents,
      accepted_events_per_s: Math.round(totals.acceptedEvents / seconds),
      dropped_by_sdk_events: totals.droppedEvents,
      visible_events: seen,
      dead_letter_batches: parked,
      answers: totals.answers,
      reader_answers: readerAnswers,
      memory_mb: growth,
      backlog_events: { after_warmup: base?.backlog ?? 0, last: last?.backlog ?? 0 },
      js_heap_after_gc_mb: { after_warmup: base?.heaps ?? {}, last: last?.heaps ?? {} },
    };
  });
}

// Printed after everything has shut down, so it stays the last line.
console.log(JSON.stringify(await main()));
