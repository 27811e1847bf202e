import { type ClickHouseClient, ClickHouseError } from "@clickhouse/client-web";
import { CH_EVENTS, insertBinary, openClickHouse } from "../../shared/clickhouse.js";
import { type Config, configOf } from "../../shared/config.js";
import { type EnvelopeHeader, EventEnvelope, gunzipCapped } from "../../shared/envelope.js";
import { QUEUES, queueRetryDelaySeconds } from "../../shared/queues.js";
import { LIMITS } from "../../shared/telemetry/limits.js";
import { ProjectActors, SliceNumbers } from "./actors.js";
import { appendRows, INSERT_COLUMNS, RowSink } from "./wire-rows.js";

/** A message of this delivery whose batch this consumer holds the claim on. */
type Claimed = {
  message: Message<unknown>;
  header: EnvelopeHeader;
  /** The decompressed TelemetryBatch. */
  batch: Uint8Array;
  /** Later messages of this delivery with the same batch key (an SDK retry): settled with this one. */
  riders: Message<unknown>[];
};

/**
 * How long a claim on a batch key outlives its holder: longer than the holder's two ClickHouse requests
 * (presence check, insert; 30 s each) may take, so a claim never lapses while its insert may still commit.
 */
export const CLAIM_LEASE_MS = 120_000;

/**
 * One INSERT per consumer batch, built straight from the wire bytes (workers/ingest/consumer/wire-rows.ts) as
 * RowBinary. Exactly once in effect, and race-free:
 *  - the batch keys are claimed first (durable-objects/batch-claims.ts, one object per project), so two
 *    deliveries of one batch never both run the steps below: a key held by another consumer retries
 *    later, when the holder's rows are visible;
 *  - rows ClickHouse already holds (same batch key and event index) are skipped, so a redelivery, an SDK
 *    retry however compressed, or a dead-letter replay is never counted twice;
 *  - a batch key repeated inside this delivery is built once.
 * Every row carries its player's and session's dense number (workers/shared/actors.ts): the row builder
 * collects the distinct ids as it walks (./actors.ts), and before a slice is inserted the ids new in it
 * are numbered by the project's object, the one that holds its claims (one call per project per slice;
 * a delivery of up to INSERT_ROWS rows is one slice). If the object is down, the delivery is retried as
 * a failed insert is, its claims released at once.
 * Messages are acknowledged only after ClickHouse confirmed the insert.
 */
export async function consumeEvents(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  const byKey = new Map<string, Claimed>();
  for (const message of batch.messages) {
    try {
      const { header, body } = EventEnvelope.parse(message.body);
      const seen = byKey.get(header.batchKey);
      if (seen && seen.header.projectId === header.projectId) {
        seen.riders.push(message);
        continue;
      }
      const decoded =
        header.encoding === "gzip" ? await gunzipCapped(body, LIMITS.maxDecompressedBytes) : body;
      byKey.set(header.batchKey, { message, header, batch: decoded, riders: [] });
    } catch (err) {
      // Ingest validated it, so this cannot decode however often it is retried: park it at once.
      await parkUndecodable(env, message, err);
    }
  }
  if (!byKey.size) {
    return;
  }
  const holder = crypto.randomUUID();
  let claimed: Claimed[];
  try {
    claimed = await claim(env, [...byKey.values()], holder);
  } catch (err) {
    console.error(
      "batch claims unavailable, retrying batch",
      err instanceof Error ? err.message : String(err),
    );
    retryAll([...byKey.values()]);
    return;
  }
  const held = new Set(claimed);
  // Held by another delivery right now: by the retry its rows are stored (or its lease has lapsed).
  retryAll([...byKey.values()].filter((c) => !held.has(c)));
  if (!claimed.length) {
    return;
  }
  const config = configOf(env);
  const ch = openClickHouse(config);
  let insertSent = false;
  let unreadable: Claimed[];
  try {
    const present = await presentEvents(ch, claimed);
    const sent = await buildAndInsert(env, config, claimed, present, () => {
      insertSent = true;
    });
    unreadable = sent.unreadable;
  } catch (err) {
    console.error("events insert failed, retrying batch", err instanceof Error ? err.message : String(err));
    // Nothing was inserted if no insert was sent or ClickHouse refused it with an exception, so the
    // claims can go at once. Otherwise (a timeout, a dropped connection) an insert may still commit on
    // the server: the claims are kept until their lease lapses, and the retry then sees its rows. A
    // numbering that failed is thrown only when no insert is in doubt (buildAndInsert).
    if (!insertSent || err instanceof ClickHouseError || err instanceof NumbersUnavailable) {
      await release(env, claimed, holder);
    }
    retryAll(claimed);
    return;
  }
  for (const c of unreadable) {
    for (const m of [c.message, ...c.riders]) {
      await parkUndecodable(env, m, new Error("malformed TelemetryBatch"));
    }
  }
  await release(env, claimed, holder);
  const parked = new Set(unreadable);
  for (const c of claimed.filter((x) => !parked.has(x))) {
    c.message.ack();
    for (const r of c.riders) {
      r.ack();
    }
  }
}

function retryAll(messages: Claimed[]): void {
  for (const c of messages) {
    for (const m of [c.message, ...c.riders]) {
      m.retry({ delaySeconds: queueRetryDelaySeconds(QUEUES.events, m.attempts) });
    }
  }
}

/** The messages whose batch keys this holder now holds, asked of each project's claims object at once. */
async function claim(env: Env, all: Claimed[], holder: string): Promise<Claimed[]> {
  const byProject = byProjectOf(all);
  const granted = await Promise.all(
    [...byProject].map(async ([projectId, cs]) => {
      const stub = env.BATCH_CLAIMS.get(env.BATCH_CLAIMS.idFromName(projectId));
      const keys = new Set(
        await stub.claim(
          cs.map((c) => c.header.batchKey),
          holder,
          CLAIM_LEASE_MS,
        ),
      );
      return cs.filter((c) => keys.has(c.header.batchKey));
    }),
  );
  return granted.flat();
}

/** Best effort: a claim not given back lapses with its lease. */
async function release(env: Env, claimed: Claimed[], holder: string): Promise<void> {
  const byProject = byProjectOf(claimed);
  await Promise.all(
    [...byProject].map(async ([projectId, cs]) => {
      try {
        const stub = env.BATCH_CLAIMS.get(env.BATCH_CLAIMS.idFromName(projectId));
        await stub.release(
          cs.map((c) => c.header.batchKey),
          holder,
        );
      } catch (err) {
        console.warn("batch claims not released", err instanceof Error ? err.message : String(err));
      }
    }),
  );
}

function byProjectOf(cs: Claimed[]): Map<string, Claimed[]> {
  const out = new Map<string, Claimed[]>();
  for (const c of cs) {
    const list = out.get(c.header.projectId);
    if (list) {
      list.push(c);
    } else {
      out.set(c.header.projectId, [c]);
    }
  }
  return out;
}

/**
 * Rows per INSERT: a delivery of 100 SDK batches can hold 150,000 events or more, so its rows go in a
 * few inserts of about this many, each sent as soon as it is built; the next is built while ClickHouse
 * parses the last. Big enough for ClickHouse (one part per partition per insert), small enough that the
 * isolate holds at most MAX_INSERTS_IN_FLIGHT bodies of ~10 MB at a time.
 */
export const INSERT_ROWS = 25_000;
const MAX_INSERTS_IN_FLIGHT = 3;

/** The project's object could not number a slice's ids: nothing of that slice was sent. */
export class NumbersUnavailable extends Error {}

/**
 * Has each project's object number the ids new in this slice (one call per project, at once), in the
 * order the rows met them. Slices are numbered one after another, so numbers follow first-seen order
 * across the delivery.
 */
async function numberSlice(env: Env, slice: SliceNumbers): Promise<void> {
  try {
    await Promise.all(
      slice.projects.map((project) =>
        project.numberWith((ids) =>
          env.BATCH_CLAIMS.get(env.BATCH_CLAIMS.idFromName(project.projectId)).number(ids),
        ),
      ),
    );
  } catch (err) {
    throw new NumbersUnavailable(err instanceof Error ? err.message : String(err), { cause: err });
  }
}

/**
 * Builds every claimed message's rows, leaving out those ClickHouse holds, and inserts them in
 * INSERT_ROWS slices, each once its ids are numbered. Resolves once every insert is confirmed; rejects
 * if any failed (the rows of those that succeeded are then present, and the retry skips them). A message
 * that does not walk as a TelemetryBatch is returned, its partial rows removed, for the dead-letter queue.
 */
async function buildAndInsert(
  env: Env,
  config: Config,
  claimed: Claimed[],
  present: Map<string, Set<number>>,
  onSend: () => void,
): Promise<{ unreadable: Claimed[] }> {
  const unreadable: Claimed[] = [];
  const inFlight = new Set<Promise<void>>();
  const failures: unknown[] = [];
  const projects = new Map<string, ProjectActors>();
  let sink = new RowSink();
  let slice = new SliceNumbers();
  let rows = 0;
  // The slices' numbering, one after another.
  let numbering: Promise<void> = Promise.resolve();
  const send = async (body: RowSink, numbers: SliceNumbers) => {
    while (inFlight.size >= MAX_INSERTS_IN_FLIGHT) {
      await Promise.race(inFlight);
    }
    numbering = numbering.then(() => numberSlice(env, numbers));
    const p: Promise<void> = numbering
      .then(() => {
        numbers.fill(body);
        onSend();
        return insertRows(config, body);
      })
      .catch((err: unknown) => {
        failures.push(err);
      })
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  };
  for (const c of claimed) {
    const mark = sink.len;
    const markRows = slice.rows;
    let project = projects.get(c.header.projectId);
    if (!project) {
      project = new ProjectActors(c.header.projectId);
      projects.set(c.header.projectId, project);
    }
    slice.forProject(project);
    try {
      rows += appendRows(sink, c.header, c.batch, present.get(c.header.batchKey), slice).rows;
    } catch (err) {
      console.error("malformed batch in an events message", err instanceof Error ? err.message : "");
      sink.len = mark;
      slice.rows = markRows;
      unreadable.push(c);
      continue;
    }
    if (rows >= INSERT_ROWS && failures.length === 0) {
      await send(sink, slice);
      sink = new RowSink();
      slice = new SliceNumbers();
      rows = 0;
    }
  }
  if (sink.len && failures.length === 0) {
    await send(sink, slice);
  }
  await Promise.all(inFlight);
  if (failures.length) {
    // An insert that may have committed decides what happens to the claims (see consumeEvents); a
    // slice that could not be numbered was never sent.
    throw (
      failures.find((f) => !(f instanceof ClickHouseError) && !(f instanceof NumbersUnavailable)) ??
      failures[0]
    );
  }
  return { unreadable };
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

/** Event indexes per batch key, of the rows of these batches that ClickHouse already holds. */
export async function presentEvents(
  ch: ClickHouseClient,
  claimed: Claimed[],
): Promise<Map<string, Set<number>>> {
  if (!claimed.length) {
    return new Map();
  }
  // Every event's timestamp lies in ingest's window around the time it was received.
  const received = claimed.map((c) => Number(c.header.receivedAt) * 1000);
  const from = Math.min(...received) - LIMITS.timestampMaxAgeUs;
  const to = Math.max(...received) + LIMITS.timestampMaxAheadUs;
  const rs = await ch.query({
    query: `
      SELECT batch_id, groupArray(event_index)
      FROM ${CH_EVENTS}
      WHERE project_id IN {projects:Array(UUID)}
        AND batch_id IN {batches:Array(String)}
        AND timestamp BETWEEN fromUnixTimestamp64Micro({from:Int64}, 'UTC')
          AND fromUnixTimestamp64Micro({to:Int64}, 'UTC')
      GROUP BY batch_id`,
    query_params: {
      projects: [...new Set(claimed.map((c) => c.header.projectId))],
      batches: claimed.map((c) => c.header.batchKey),
      from,
      to,
    },
    format: "JSONCompactEachRow",
  });
  const rows = await rs.json<[string, number[]]>();
  return new Map(rows.map(([batch, indexes]) => [batch, new Set(indexes)]));
}

const INSERT_STATEMENT = `INSERT INTO ${CH_EVENTS} (${INSERT_COLUMNS.join(", ")}) FORMAT RowBinary`;

/** One INSERT of RowBinary rows (workers/shared/clickhouse.ts: insertBinary, and how it fails). */
export async function insertRows(config: Config, rows: RowSink): Promise<void> {
  await insertBinary(config, INSERT_STATEMENT, rows.buf.subarray(0, rows.len), {
    // One block per insert, so one part per partition: a failed insert leaves whole slices or nothing.
    max_insert_block_size: 4_000_000,
    input_format_parallel_parsing: 0,
  });
}
