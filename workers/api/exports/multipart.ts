/**
 * R2 multipart parts must all have the same size except the last, and be at least 5 MiB; 8 MiB keeps
 * a million-row NDJSON export to a few dozen parts while one part is all we ever hold in memory.
 */
export const PART_BYTES = 8 * 1024 * 1024;

export type Uploaded = { bytes: number; parts: number };

/**
 * Copies a byte stream into one R2 object, part by part, never holding more than one part (plus the
 * chunk in hand). A failure aborts the upload, so no half-written object is left behind.
 */
export async function streamToR2(
  bucket: R2Bucket,
  key: string,
  source: ReadableStream<Uint8Array>,
  contentType: string,
): Promise<Uploaded> {
  const upload = await bucket.createMultipartUpload(key, { httpMetadata: { contentType } });
  const parts: R2UploadedPart[] = [];
  let part = new Uint8Array(PART_BYTES);
  let filled = 0;
  let bytes = 0;
  const flush = async () => {
    parts.push(await upload.uploadPart(parts.length + 1, part.subarray(0, filled)));
    part = new Uint8Array(PART_BYTES);
    filled = 0;
  };
  try {
    for await (const chunk of source) {
      bytes += chunk.byteLength;
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
    if (filled > 0 || parts.length === 0) {
      await flush();
    }
    await upload.complete(parts);
    return { bytes, parts: parts.length };
  } catch (err) {
    await upload.abort().catch(() => {});
    throw err;
  }
}
