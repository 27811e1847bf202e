import { Session } from "chdb";
import { readFileSync, readdirSync, rmSync } from "node:fs";
rmSync("/tmp/chdb-dbg", { recursive: true, force: true });
const s = new Session("/tmp/chdb-dbg");
s.query("CREATE DATABASE IF NOT EXISTS telemetry");
for (const f of readdirSync("schema/clickhouse/migrations").sort())
  for (const st of readFileSync(`schema/clickhouse/migrations/${f}`, "utf8").split(/;\s*$/m).map((x) => x.trim()))
    if (st.replace(/--.*$/gm, "").trim()) s.query(st);
const ins = (b, i) => s.query(`INSERT INTO telemetry.events (project_id, event_name, timestamp, session_id, player_id, map_id, fps, build_id, platform, batch_id, event_index) VALUES ('11111111-1111-1111-1111-111111111111', 'frame_sample', now64(6) - INTERVAL 1 HOUR, 'cache-${i}', '', 'dust', 30, '${b}', 'windows', 'b${i}', 0)`);
ins("cache-1", 1); ins("cache-1", 2); ins("cache-2", 3);
console.log(s.query("SELECT build_id, day, events, first_seen FROM telemetry.build_days", "CSV"));
console.log(s.query(`SELECT toString(build_id) AS build, formatDateTime(min(first_seen), '%Y-%m-%dT%H:%i:%S.%fZ', 'UTC') AS first, sum(events), uniqMerge(sessions) FROM telemetry.build_days WHERE project_id='11111111-1111-1111-1111-111111111111' AND day >= today() - 6 GROUP BY build_id ORDER BY min(first_seen) DESC, build ASC LIMIT 50`, "CSV"));
