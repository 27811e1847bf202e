// A queue message is the ingest request body exactly as it arrived (gzip'd or not), behind a small
// JSON header: [u32 big-endian header length][header UTF-8 JSON][body]. Raw bytes, not base64, so a
// maximal 126,000-byte body plus header fits one 128 KB message.
export type EnvelopeHeader = {
  v: 1;
  projectId: string;
  tenantId: string;
  /**
   * Deterministic id of this batch, from the project and the decoded (decompressed) batch: the same
   * events for the same project get the same key however they were compressed.
   */
  batchKey: string;
  receivedAt: number;
  encoding: "gzip" | "identity";
  eventCount: number;
  /**
   * The request's X-SDK-Version header as sent (`name/version` or a bare version), for the sdk_name and
   * sdk_version columns. Absent on messages enqueued before it was carried: those rows get ''.
   */
  sdkVersion?: string;
};

export function sealEnvelope(header: EnvelopeHeader, body: Uint8Array): Uint8Array {
  const head = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(4 + head.length + body.length);
  new DataView(out.buffer).setUint32(0, head.length);
  out.set(head, 4);
  out.set(body, 4 + head.length);
  return out;
}

export function openEnvelope(message: ArrayBuffer | Uint8Array): {
  header: EnvelopeHeader;
  body: Uint8Array;
} {
  const bytes = message instanceof Uint8Array ? message : new Uint8Array(message);
  if (bytes.length < 4) {
    throw new Error("envelope too short");
  }
  const headLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  if (4 + headLength > bytes.length) {
    throw new Error("envelope header overruns the message");
  }
  const header = headerOf(JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + headLength))));
  return { header, body: bytes.subarray(4 + headLength) };
}

/** The header as sealEnvelope wrote it, every field checked; anything else is not ours. */
function headerOf(h: unknown): EnvelopeHeader {
  if (
    typeof h !== "object" ||
    h === null ||
    !("v" in h) ||
    h.v !== 1 ||
    !("projectId" in h && typeof h.projectId === "string") ||
    !("batchKey" in h && typeof h.batchKey === "string")
  ) {
    throw new Error("unknown envelope version");
  }
  if (
    !("tenantId" in h && typeof h.tenantId === "string") ||
    !("receivedAt" in h && typeof h.receivedAt === "number") ||
    !("encoding" in h && (h.encoding === "gzip" || h.encoding === "identity")) ||
    !("eventCount" in h && typeof h.eventCount === "number") ||
    ("sdkVersion" in h && h.sdkVersion !== undefined && typeof h.sdkVersion !== "string")
  ) {
    throw new Error("envelope header incomplete");
  }
  const header: EnvelopeHeader = {
    v: 1,
    projectId: h.projectId,
    tenantId: h.tenantId,
    batchKey: h.batchKey,
    receivedAt: h.receivedAt,
    encoding: h.encoding,
    eventCount: h.eventCount,
  };
  if ("sdkVersion" in h && typeof h.sdkVersion === "string") {
    header.sdkVersion = h.sdkVersion;
  }
  return header;
}

/**
 * The events queue's schema (hand-written: the ingest bundle carries no zod): one ingest request's
 * envelope, as bytes. Throws on anything else; the consumer parks what it cannot read.
 */
export const EventEnvelope = {
  parse(body: unknown): { header: EnvelopeHeader; body: Uint8Array } {
    if (!(body instanceof ArrayBuffer) && !(body instanceof Uint8Array)) {
      throw new Error("an events message is an envelope of bytes");
    }
    return openEnvelope(body);
  },
};

export class TooLarge extends Error {}

/** Gunzips, refusing output beyond `cap` bytes so a gzip bomb never exhausts the isolate's memory. */
export function gunzipCapped(data: Uint8Array, cap: number): Promise<Uint8Array> {
  const ds = new DecompressionStream("gzip");
  const writer = ds.writable.getWriter();
  writer.write(data).catch(() => {});
  writer.close().catch(() => {});
  return readCapped(ds.readable, cap);
}

/** Reads a whole stream, stopping (and throwing TooLarge) as soon as it passes `cap` bytes. */
export async function readCapped(
  stream: ReadableStream<Uint8Array> | null,
  cap: number,
): Promise<Uint8Array> {
  const reader = stream?.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) {
      break;
    }
    total += value.byteLength;
    if (total > cap) {
      await reader.cancel().catch(() => {});
      throw new TooLarge(`stream exceeds ${cap} bytes`);
    }
    chunks.push(value);
  }
  return concat(chunks, total);
}

export function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1 && chunks[0]) {
    return chunks[0];
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
