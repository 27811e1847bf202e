import type { ClickHouseClient } from "@clickhouse/client-web";
import { CH_EVENTS, openClickHouse } from "../shared/clickhouse.js";
import { configOf } from "../shared/config.js";
import { type EnvelopeHeader, openEnvelope } from "../shared/envelope.js";
import { QUEUES, queueRetryDelaySeconds } from "../shared/queues.js";
import { type EventRow, rowsOfMessage } from "./rows.js";

type Decoded = { message: Message<unknown>; header: EnvelopeHeader; rows: EventRow[] };

/**
 * One INSERT per consumer batch. Rows already in ClickHouse (same batch key and event index) or
 * already taken from an earlier message of the batch are skipped, so a message redelivered alone or
 * inside another batch, or an SDK retry of the same events, is never counted twice. Messages
 * are acknowledged only after ClickHouse confirmed the insert.
 */
export async function consumeEvents(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const decoded: Decoded[] = [];
  for (const message of batch.messages) {
    try {
      const { header, body } = openEnvelope(message.body as ArrayBuffer);
      decoded.push({ message, header, rows: await rowsOfMessage(header, body) });
    } catch (err) {
      // Ingest validated it, so this cannot decode however often it is retried: park it at once.
      await parkUndecodable(env, message, err);
    }
  }
  if (!decoded.length) {
    return;
  }
  try {
    const ch = openClickHouse(configOf(env));
    // Rows already stored, and rows an earlier message of this very batch carries: an SDK's retry of
    // the same events (same key, however compressed) may arrive in the same consumer batch.
    const seen = await presentEvents(ch, decoded);
    const rows = decoded.flatMap((d) =>
      d.rows.filter((r) => {
        const key = `${r.batch_id}:${r.event_index}`;
        if (seen.has(key)) {
          return false;
        }
        seen.add(key);
        return true;
      }),
    );
    if (rows.length) {
      await insertEvents(ch, rows);
    }
    for (const d of decoded) {
      d.message.ack();
    }
  } catch (err) {
    console.error("events insert failed, retrying batch", err instanceof Error ? err.message : String(err));
    for (const d of decoded) {
      d.message.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.events, d.message.attempts) });
    }
  }
}

async function parkUndecodable(env: Env, message: Message<unknown>, err: unknown): Promise<void> {
  console.error(
    "undecodable events message sent to the dead-letter queue",
    err instanceof Error ? err.message : "",
  );
  try {
    const body = message.body instanceof ArrayBuffer ? new Uint8Array(message.body) : message.body;
    await env.DEAD_LETTER_QUEUE.send(body, { contentType: body instanceof Uint8Array ? "bytes" : "json" });
    message.ack();
  } catch (sendErr) {
    console.error("dead-letter send failed", sendErr instanceof Error ? sendErr.message : "");
    message.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.events, message.attempts) });
  }
}

/** Keys `${batch_id}:${event_index}` of the rows of these batches that ClickHouse already holds. */
export async function presentEvents(ch: ClickHouseClient, decoded: Decoded[]): Promise<Set<string>> {
  const all = decoded.flatMap((d) => d.rows);
  if (!all.length) {
    return new Set();
  }
  let from = all[0]?.timestamp ?? "";
  let to = from;
  for (const r of all) {
    if (r.timestamp < from) {
      from = r.timestamp;
    }
    if (r.timestamp > to) {
      to = r.timestamp;
    }
  }
  const rs = await ch.query({
    query: `
      SELECT batch_id, event_index
      FROM ${CH_EVENTS}
      WHERE project_id IN {projects:Array(UUID)}
        AND batch_id IN {batches:Array(String)}
        AND timestamp BETWEEN {from:DateTime64(6, 'UTC')} AND {to:DateTime64(6, 'UTC')}`,
    query_params: {
      projects: [...new Set(decoded.map((d) => d.header.projectId))],
      batches: [...new Set(decoded.map((d) => d.header.batchKey))],
      from,
      to,
    },
    format: "JSONCompactEachRow",
  });
  const rows = await rs.json<[string, number]>();
  return new Set(rows.map(([batch, index]) => `${batch}:${index}`));
}

export async function insertEvents(ch: ClickHouseClient, rows: EventRow[]): Promise<void> {
  await ch.insert({
    table: CH_EVENTS,
    values: rows,
    format: "JSONEachRow",
    // One block per insert, so one part per partition: a failed insert leaves whole slices or nothing.
    clickhouse_settings: { max_insert_block_size: "4000000", input_format_parallel_parsing: 0 },
  });
}
