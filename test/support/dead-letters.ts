import { create, toBinary } from "@bufbuild/protobuf";
import { Miniflare } from "miniflare";
import { TelemetryBatchSchema } from "../../proto/gen/telemetry/v1/telemetry_pb.js";
import { deadLetterKey } from "../../workers/shared/dead-letters.js";
import { sealEnvelope } from "../../workers/shared/envelope.js";
import type { SdkEvent } from "./dashboard.js";
import type { Service } from "./service.js";

/**
 * Parks a batch as the ingest Worker's dead-letter consumer does (workers/ingest/consumer/dead-letters.ts):
 * the queue message (envelope + protobuf batch) under its dead-letter key in the DEAD_LETTERS bucket,
 * with the consumer's metadata. A running service's events consumer only dead-letters a batch after
 * eight retries over about 20 minutes, so a browser test writes the parked object itself, into the
 * local R2 that `wrangler dev` persists (its --persist-to), through Miniflare's own R2 binding.
 */
export async function parkBatch(
  service: Service,
  opts: { tenantId: string; projectId: string; batchKey: string; events: SdkEvent[]; messageIds: string[] },
): Promise<{ keys: string[]; bytes: number }> {
  const body = toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { events: opts.events }));
  const message = sealEnvelope(
    {
      v: 1,
      projectId: opts.projectId,
      tenantId: opts.tenantId,
      batchKey: opts.batchKey,
      receivedAt: Date.now(),
      encoding: "identity",
      eventCount: opts.events.length,
      sdkVersion: "dashboard-test/1.0",
    },
    body,
  );
  const mf = new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response(null, { status: 204 }); } }",
    r2Buckets: { DEAD_LETTERS: "telemetry-dead-letters" },
    r2Persist: `${service.persistTo}/v3/r2`,
  });
  try {
    // Miniflare's R2 binding in Node; its type names the Workers runtime's types, which this program lacks.
    const bucket = (await mf.getR2Bucket("DEAD_LETTERS")) as unknown as {
      put(key: string, value: Uint8Array, opts: { customMetadata: Record<string, string> }): Promise<unknown>;
    };
    const keys = [];
    for (const id of opts.messageIds) {
      const key = deadLetterKey(message, id);
      await bucket.put(key, message, {
        customMetadata: {
          messageId: id,
          attempts: "9",
          parkedAt: new Date().toISOString(),
          reason: "Storing it failed on every delivery (ClickHouse refused or was unreachable)",
        },
      });
      keys.push(key);
    }
    return { keys, bytes: message.byteLength };
  } finally {
    await mf.dispose();
  }
}
