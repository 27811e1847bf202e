import { Session } from "chdb";
import { readFileSync, readdirSync, rmSync } from "node:fs";
const drop = process.argv[2] ?? "";
rmSync("/tmp/chdb-try3", { recursive: true, force: true });
const s = new Session("/tmp/chdb-try3");
s.query("CREATE DATABASE IF NOT EXISTS telemetry");
for (const f of readdirSync("schema/clickhouse/migrations").sort()) {
  for (const st of readFileSync(`schema/clickhouse/migrations/${f}`, "utf8").split(/;\s*$/m).map((x) => x.trim())) {
    if (!st.replace(/--.*$/gm, "").trim()) continue;
    try { s.query(st); } catch (e) { console.log(f, "ERR", e.message.slice(0, 400), st.slice(0, 80)); }
  }
}
for (const d of drop.split(",").filter(Boolean)) s.query(`DROP VIEW telemetry.${d}_mv`);
const t0 = Date.now();
s.query(`INSERT INTO telemetry.events (project_id, timestamp, event_name, session_id, player_id, build_id, map_id, platform, resolution, gpu, source, position_x, position_y, position_z, fps, frame_time_ms, memory_used_bytes, gpu_time_ms, metrics, batch_id, event_index, received_at)
SELECT project_id, ts, event_name, concat('s-', toString(pl), '-', toString(days_ago), '-', toString(h3 % 2)), if(pl % 10 = 0, '', concat('player-', toString(pl))),
  concat('1.', toString(intDiv(90 - days_ago, 3))), ['maps/desert_outpost', 'maps/frozen_harbor', 'maps/old_town', ''][1 + h2 % 4] AS map_id,
  ['windows', 'windows', 'ps5', 'xbox', 'switch', 'android'][1 + h3 % 6], ['1920x1080', '2560x1440', '3840x2160'][1 + h1 % 3], ['RTX 3060', 'RTX 4070', 'RX 6700', 'Adreno 740'][1 + pl % 4], 'player',
  if(map_id = '', NULL, toFloat32((h2 % 100000) / 100.0 - 500)), if(map_id = '', NULL, toFloat32((h3 % 100000) / 100.0 - 500)), if(map_id = '', NULL, toFloat32((h1 % 5000) / 100.0)),
  if(perf, toFloat32(20 + (h1 % 1200) / 10.0), NULL), if(perf, toFloat32(1000 / (20 + (h1 % 1200) / 10.0)), NULL),
  if(perf AND h2 % 3 > 0, toUInt64((1500 + h3 % 6000) * 1048576 + h1 % 1048576), NULL), if(perf AND h3 % 4 > 0, toFloat32((h2 % 300) / 10.0), NULL),
  if(event_name = 'frame_sample', map('mem.vram', toFloat64(h2 % 4096) * 1048576), map()), concat('bench-', toString(intDiv(number, 1000))), toUInt32(number % 1000), ts
FROM (SELECT number, cityHash64(number, 1) AS h1, cityHash64(number, 2) AS h2, cityHash64(number, 3) AS h3, toUUID('11111111-1111-1111-1111-111111111111') AS project_id,
  toUInt64(pow((h1 % 1000003) / 1000003, 2) * 50000) AS pl, cityHash64(pl) % 90 AS first_ago,
  toUInt64(if(h2 % 100 < 55, first_ago, greatest(0, toInt64(first_ago) - toInt64(h2 % 31)))) AS days_ago,
  toDateTime64(toStartOfDay(now('UTC')) - toIntervalDay(days_ago), 6, 'UTC') + toIntervalSecond(h3 % 86400) + toIntervalMicrosecond(h1 % 1000000) AS ts,
  ['player_move', 'player_move', 'frame_sample', 'frame_sample', 'frame_sample', 'match_start', 'level_up', 'match_end', 'item_pickup', 'enemy_killed', 'ui_click', 'purchase'][1 + h2 % 12] AS event_name,
  event_name IN ('frame_sample', 'player_move', 'enemy_killed') AS perf FROM numbers(1000000))`);
console.log(drop || "all MVs", "insert 1M bench-shaped ms", Date.now() - t0);
for (const t of []) console.log(t, s.query(`SELECT count() FROM telemetry.${t}`, "CSV").trim());
