-- Dense numbers of a project's players and sessions (workers/shared/actors.ts, docs/ingest.md "Dense
-- numbers"): the events consumer writes, on every row, the number its project's BatchClaims object gave
-- the row's player (the `player` column: player_id, or session_id when player_id is empty) and its
-- session_id. UInt32 from 1, first-seen order, stable for an id while it is retained. 0 means not
-- numbered: rows stored before this migration, which the backfill numbers (docs/ingest.md), or rows
-- inserted by something other than the consumer. The bitmap rollups (groupBitmap of these numbers per
-- project and day, hour, minute and dimension) read them; nothing reads them before.
--
-- Adding a column with a constant default rewrites no part: existing parts read 0 until a mutation
-- (the backfill) writes their numbers.
ALTER TABLE telemetry.events ADD COLUMN IF NOT EXISTS player_idx UInt32 DEFAULT 0 AFTER received_at;
ALTER TABLE telemetry.events ADD COLUMN IF NOT EXISTS session_idx UInt32 DEFAULT 0 AFTER player_idx;
