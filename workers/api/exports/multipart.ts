/**
 * R2 multipart parts must all have the same size except the last, and be at least 5 MiB; 8 MiB keeps
 * a million-row NDJSON export to a few dozen parts (a 100M-event one to about 9,000, under R2's 10,000)
 * while at most two parts are held in memory: the one in flight and the one filling.
 */
export const PART_BYTES = 8 * 1024 * 1024;

export type Uploaded = { bytes: number; parts: number };

/**
 * Copies a byte stream into one R2 object, part by part: the next part fills while the previous one
 * uploads (one upload in flight), so reading the source and writing R2 overlap. `observe` sees every
 * chunk as it is read (the export's progress). A failure aborts the upload, so no half-written object
 * is left behind.
 */
export async function streamToR2(
  bucket: R2Bucket,
  key: string,
  source: ReadableStream<Uint8Array>,
  contentType: string,
  observe: (chunk: Uint8Array) => Promise<void> | undefined = () => undefined,
): Promise<Uploaded> {
  const upload = await bucket.createMultipartUpload(key, { httpMetadata: { contentType } });
  const parts: R2UploadedPart[] = [];
  let inFlight: Promise<void> = Promise.resolve();
  let part = new Uint8Array(PART_BYTES);
  let filled = 0;
  let bytes = 0;
  let partCount = 0;
  const flush = async () => {
    const number = ++partCount;
    const body = part.subarray(0, filled);
    // The previous part must be stored before this one starts: one upload in flight, two parts held.
    await inFlight;
    inFlight = upload.uploadPart(number, body).then((uploaded) => {
      parts.push(uploaded);
    });
    // Its failure surfaces at the next await of inFlight; not an unhandled rejection meanwhile.
    inFlight.catch(() => {});
    part = new Uint8Array(PART_BYTES);
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
        const n = Math.min(PART_BYTES - filled, chunk.byteLength - offset);
        part.set(chunk.subarray(offset, offset + n), filled);
        filled += n;
        offset += n;
        if (filled === PART_BYTES) {
          await flush();
        }
      }
    }
    if (filled > 0 || partCount === 0) {
      await flush();
    }
    await inFlight;
    parts.sort((a, b) => a.partNumber - b.partNumber);
    await upload.complete(parts);
    return { bytes, parts: parts.length };
  } catch (err) {
    // An upload still in flight settles before the abort (its own failure is the one already thrown).
    await inFlight.catch(() => {});
    await upload.abort().catch(() => {});
    throw err;
  }
}
