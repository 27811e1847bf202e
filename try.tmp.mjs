import { Session } from "chdb";
import { readFileSync, readdirSync, rmSync } from "node:fs";
rmSync("/tmp/chdb-try2", { recursive: true, force: true });
const s = new Session("/tmp/chdb-try2");
s.query("CREATE DATABASE IF NOT EXISTS telemetry");
for (const f of readdirSync("schema/clickhouse/migrations").sort()) {
  for (const st of readFileSync(`schema/clickhouse/migrations/${f}`, "utf8").split(/;\s*$/m).map((x) => x.trim())) {
    if (!st.replace(/--.*$/gm, "").trim()) continue;
    try { s.query(st); } catch (e) { console.log(f, "ERR", e.message.slice(0, 400), st.slice(0, 80)); }
  }
}
const t0 = Date.now();
s.query(`INSERT INTO telemetry.events (project_id, event_name, timestamp, session_id, player_id, map_id, position_x, position_y, position_z, fps, frame_time_ms, memory_used_bytes, gpu_time_ms, metrics, build_id, platform, batch_id, event_index)
SELECT '11111111-1111-1111-1111-111111111111', ['a','b','c'][1+number%3], now64(6) - toIntervalSecond(number % 86400*3), toString(number%100), if(number%7=0,'',toString(number%50)), ['m1','m2',''][1+number%3],
 (number % 997) - 500, (number % 991) - 500, if(number%5=0, NULL, number % 50), if(number%2=0, NULL, 30 + number % 100 / 10), 16.7, 1048576*1000, NULL, map('mem.vram', 1048576*5.5, 'io.read_ops', 3), concat('1.', toString(number%3)), 'windows', toString(intDiv(number,1000)), number%1000 FROM numbers(1000000)`);
console.log("insert 1M ms", Date.now() - t0);
for (const t of ["heatmap_cells", "alert_cells", "daily_events", "build_days", "compare_days", "hourly_actors", "daily_players"]) console.log(t, s.query(`SELECT count() FROM telemetry.${t}`, "CSV").trim());
console.log(s.query(`SELECT * FROM telemetry.heatmap_cells_src(whole=false, project='11111111-1111-1111-1111-111111111111', days=[today()]) LIMIT 2`, "JSONEachRow"));
