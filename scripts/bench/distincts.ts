// The dashboard's distinct counts (players per day, sessions of the window, mau), the statement they
// replaced and theirs, back to back on the same data: the bench load of bench:analytics
// (BENCH_MAIN_EVENTS, BENCH_OTHER_EVENTS; 2M + 1M by default here), no Worker. Each round times, in
// turn: the former statement (distinct player-days of daily_actors for every day and for mau), the new
// read with every closed day stored (what a dashboard read costs once a day's count is stored), and the
// new read with none of them valid (a new data version each time: every closed day recounted and
// stored, what the first read after an erasure costs), and the window's distinct sessions alone (part
// of both reads, unchanged). Medians of ROUNDS; a JSON last line.
import { createClient } from "@clickhouse/client-web";
import { dashboardDistincts, playersBetween, rollingPlayers } from "../../workers/api/analytics/dashboard.js";
import { distinct, selectRows } from "../../workers/api/analytics/select.js";
import { DAY_MS, type Window, windowOf } from "../../workers/api/window.js";
import { CH_DAILY_ACTORS } from "../../workers/shared/clickhouse.js";
import { loadBenchData, PLAYERS } from "./analytics-data.js";
import { withBenchStack } from "./stack.js";

const MAIN_EVENTS = Number(process.env.BENCH_MAIN_EVENTS ?? 2_000_000);
const OTHER_EVENTS = Number(process.env.BENCH_OTHER_EVENTS ?? 1_000_000);
const ROUNDS = 7;

type Client = ReturnType<typeof createClient>;

/** The statement the dashboard ran before the stored counts and player_last_seen. */
function formerDistincts(ch: Client, projectId: string, w: Window, nowMs: number) {
  const month = playersBetween("m", nowMs - 30 * DAY_MS, nowMs);
  return selectRows(
    ch,
    `
    SELECT 'day' AS metric, toString(day) AS key, ${distinct("id")} AS value
    FROM ${CH_DAILY_ACTORS}
    WHERE project_id = {projectId:UUID} AND kind = 'player'
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
    GROUP BY day
    UNION ALL
    SELECT 'sessions' AS metric, '' AS key, ${distinct("id")} AS value
    FROM ${CH_DAILY_ACTORS}
    WHERE project_id = {projectId:UUID} AND kind = 'session'
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})
    UNION ALL
    SELECT 'mau' AS metric, '' AS key, ${distinct("id")} AS value
    FROM (${month.sql})`,
    { projectId, from: w.from, to: w.to, ...month.params },
    { metric: "string", key: "string", value: "unknown" },
  );
}

/** The window's distinct sessions alone (unchanged): what is left of the new read's cost. */
function sessionsOnly(ch: Client, projectId: string, w: Window) {
  return selectRows(
    ch,
    `SELECT ${distinct("id")} AS value FROM ${CH_DAILY_ACTORS}
    WHERE project_id = {projectId:UUID} AND kind = 'session'
      AND day >= toDate({from:DateTime64(6, 'UTC')}) AND day < toDate({to:DateTime64(6, 'UTC')})`,
    { projectId, from: w.from, to: w.to },
    { value: "unknown" },
  );
}

/** mau alone, the former way (distinct players of daily_actors, hours and events) and from player_last_seen. */
function formerMau(ch: Client, projectId: string, nowMs: number) {
  const month = playersBetween("m", nowMs - 30 * DAY_MS, nowMs);
  return selectRows(
    ch,
    `SELECT ${distinct("id")} AS value FROM (${month.sql})`,
    { projectId, ...month.params },
    {
      value: "unknown",
    },
  );
}

function newMau(ch: Client, projectId: string, nowMs: number) {
  const rolling = rollingPlayers(nowMs);
  return selectRows(
    ch,
    rolling.sql,
    { projectId, ...rolling.params },
    { metric: "string", key: "string", value: "unknown" },
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round((sorted[Math.floor(sorted.length / 2)] as number) * 10) / 10;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

async function main() {
  return withBenchStack("distincts", async ({ stack }) => {
    const projectId = crypto.randomUUID();
    const plan = {
      mainProject: projectId,
      mainEvents: MAIN_EVENTS,
      otherProjects: Array.from({ length: 9 }, () => crypto.randomUUID()),
      otherEvents: OTHER_EVENTS,
      players: PLAYERS,
    };
    console.log(`loading ${MAIN_EVENTS.toLocaleString("en")} + ${OTHER_EVENTS.toLocaleString("en")} events…`);
    const loaded = await loadBenchData(stack.clickhouse, plan, (line) =>
      process.stdout.write(`\r${line}   `),
    );
    console.log(`\nloaded in ${loaded.toFixed(1)} s`);
    const ch = createClient({
      url: stack.clickhouse.url,
      username: stack.clickhouse.user,
      password: stack.clickhouse.password,
    });
    const nowMs = Date.now();
    const w = windowOf(30, nowMs);
    // Same answers first: the old statement and the new read agree on every number.
    const old = await formerDistincts(ch, projectId, w, nowMs);
    const fresh = await dashboardDistincts(ch, projectId, w, nowMs, 1);
    const oldDays = new Map(old.filter((r) => r.metric === "day").map((r) => [r.key, Number(r.value)]));
    const oldMau = Number(old.find((r) => r.metric === "mau")?.value);
    const oldSessions = Number(old.find((r) => r.metric === "sessions")?.value);
    const same =
      fresh.mau === oldMau &&
      fresh.sessions === oldSessions &&
      fresh.dailyActiveUsers.every((d) => d.count === (oldDays.get(d.date) ?? 0));
    if (!same) {
      throw new Error(`answers differ: ${JSON.stringify({ old, fresh })}`);
    }
    const times = {
      former: [] as number[],
      stored: [] as number[],
      recount: [] as number[],
      sessions: [] as number[],
      formerMau: [] as number[],
      newMau: [] as number[],
    };
    let version = 1;
    for (let i = 0; i < ROUNDS; i++) {
      times.former.push(await timed(() => formerDistincts(ch, projectId, w, nowMs)));
      times.stored.push(await timed(() => dashboardDistincts(ch, projectId, w, nowMs, version)));
      version++;
      times.recount.push(await timed(() => dashboardDistincts(ch, projectId, w, nowMs, version)));
      times.sessions.push(await timed(() => sessionsOnly(ch, projectId, w)));
      times.formerMau.push(await timed(() => formerMau(ch, projectId, nowMs)));
      times.newMau.push(await timed(() => newMau(ch, projectId, nowMs)));
    }
    await ch.close();
    const result = {
      main_events: MAIN_EVENTS,
      other_events: OTHER_EVENTS,
      mau: fresh.mau,
      former_ms: median(times.former),
      stored_ms: median(times.stored),
      recount_ms: median(times.recount),
      sessions_ms: median(times.sessions),
      former_mau_ms: median(times.formerMau),
      mau_ms: median(times.newMau),
    };
    console.log("\n| statement | median ms |\n|---|---|");
    console.log(`| former (daily_actors for every day and mau) | ${result.former_ms} |`);
    console.log(`| new, closed days stored | ${result.stored_ms} |`);
    console.log(`| new, every closed day recounted and stored | ${result.recount_ms} |`);
    console.log(`| of which: the window's distinct sessions alone | ${result.sessions_ms} |`);
    console.log(`| mau alone, former (daily_actors, hours, events) | ${result.former_mau_ms} |`);
    console.log(`| mau alone, player_last_seen | ${result.mau_ms} |`);
    return result;
  });
}

// Printed after everything has shut down, so it stays the last line.
console.log(JSON.stringify(await main()));
