/**
 * R2 multipart rules: every part but the last has the same size, at least 5 MiB, and an object has at
 * most 10,000 parts. Parts are 8 MiB unless the export is expected to be larger than PLANNED_PARTS of
 * them; then they grow, in whole MiB, up to MAX_PART_BYTES. At most two parts are held in memory (the
 * one uploading and the one filling), so 32 MiB parts keep a Worker under 70 MB of its 128.
 */
export const PART_BYTES = 8 * 1024 * 1024;
export const MAX_PART_BYTES = 32 * 1024 * 1024;
/** Parts planned for the expected size, leaving R2's 10,000 room for an estimate that falls short. */
const PLANNED_PARTS = 5000;
const MAX_PARTS = 10_000;
const MiB = 1024 * 1024;

export type Uploaded = { bytes: number; parts: number; partBytes: number };

/** The part size for an object of about `expectedBytes`: 8 MiB, or more so it fits in PLANNED_PARTS. */
export function partBytesFor(expectedBytes: number): number {
  const needed = Math.ceil(expectedBytes / PLANNED_PARTS / MiB) * MiB;
  return Math.min(MAX_PART_BYTES, Math.max(PART_BYTES, needed));
}

/**
 * Copies a byte stream into one R2 object, part by part: the next part fills while the previous one
 * uploads (one upload in flight), so reading the source and writing R2 overlap. `observe` sees every
 * chunk as it is read (the export's progress). `expectedBytes`, asked once the first 8 MiB are read (or
 * the stream ended before), sizes the parts (partBytesFor). A failure aborts the upload, so no
 * half-written object is left behind.
 */
export async function streamToR2(
  bucket: R2Bucket,
  key: string,
  source: ReadableStream<Uint8Array>,
  contentType: string,
  observe: (chunk: Uint8Array) => Promise<void> | undefined = () => undefined,
  expectedBytes: () => number = () => 0,
): Promise<Uploaded> {
  const upload = await bucket.createMultipartUpload(key, { httpMetadata: { contentType } });
  const parts: R2UploadedPart[] = [];
  let inFlight: Promise<void> = Promise.resolve();
  let partBytes = 0;
  let part = new Uint8Array(PART_BYTES);
  let filled = 0;
  let bytes = 0;
  let partCount = 0;
  // Once, when the first 8 MiB are in hand: the part size for the whole object.
  const size = () => {
    const expected = expectedBytes();
    if (expected > MAX_PARTS * MAX_PART_BYTES) {
      throw new Error(
        `the export would be about ${Math.round(expected / 1e9)} GB, more than object storage takes in one file ` +
          `(${MAX_PARTS} parts of ${MAX_PART_BYTES / MiB} MiB): narrow its range or filter by event name`,
      );
    }
    partBytes = partBytesFor(expected);
    if (partBytes > part.byteLength) {
      const grown = new Uint8Array(partBytes);
      grown.set(part.subarray(0, filled));
      part = grown;
    }
  };
  const flush = async () => {
    if (partCount === MAX_PARTS) {
      throw new Error(`the export outgrew ${MAX_PARTS} parts of ${partBytes / MiB} MiB: narrow its range`);
    }
    const number = ++partCount;
    const body = part.subarray(0, filled);
    // The previous part must be stored before this one starts: one upload in flight, two parts held.
    await inFlight;
    inFlight = upload.uploadPart(number, body).then((uploaded) => {
      parts.push(uploaded);
    });
    // Its failure surfaces at the next await of inFlight; not an unhandled rejection meanwhile.
    inFlight.catch(() => {});
    part = new Uint8Array(partBytes);
    filled = 0;
  };
  try {
    for await (const chunk of source) {
      bytes += chunk.byteLength;
      const observed = observe(chunk);
      if (observed) {
        await observed;
      }
      let offset = 0;
      while (offset < chunk.byteLength) {
        const n = Math.min(part.byteLength - filled, chunk.byteLength - offset);
        part.set(chunk.subarray(offset, offset + n), filled);
        filled += n;
        offset += n;
        if (filled === part.byteLength) {
          if (partBytes === 0) {
            size();
          }
          if (filled === partBytes) {
            await flush();
          }
        }
      }
    }
    if (partBytes === 0) {
      size();
    }
    if (filled > 0 || partCount === 0) {
      await flush();
    }
    await inFlight;
    parts.sort((a, b) => a.partNumber - b.partNumber);
    await upload.complete(parts);
    return { bytes, parts: parts.length, partBytes };
  } catch (err) {
    // An upload still in flight settles before the abort (its own failure is the one already thrown).
    await inFlight.catch(() => {});
    await upload.abort().catch(() => {});
    throw err;
  }
}
