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

/** Part numbers and etags as R2 gives them back; what a segmented export persists between messages. */
export type PartRef = { partNumber: number; etag: string };

/**
 * Cuts a byte stream into parts of one multipart upload: the next part fills while the previous one
 * uploads (one upload in flight), so reading the source and writing R2 overlap. Parts are numbered
 * from `firstPart`; `carry` (fewer bytes than a part, left over by an earlier segment) comes first.
 * `partBytes` 0 means not yet sized: `expectedBytes` is asked once the first 8 MiB are in hand (or at
 * `finish`), and the size chosen (partBytesFor) holds for the rest of the object.
 */
export class PartWriter {
  readonly parts: PartRef[] = [];
  private inFlight: Promise<void> = Promise.resolve();
  private part: Uint8Array;
  private filled = 0;
  private nextPart: number;
  private partBytes: number;
  private readonly expectedBytes: () => number;

  constructor(
    private readonly upload: R2MultipartUpload,
    opts: { firstPart: number; partBytes: number; carry?: Uint8Array; expectedBytes?: () => number },
  ) {
    this.nextPart = opts.firstPart;
    this.partBytes = opts.partBytes;
    this.expectedBytes = opts.expectedBytes ?? (() => 0);
    this.part = new Uint8Array(Math.max(PART_BYTES, this.partBytes, opts.carry?.byteLength ?? 0));
    if (opts.carry) {
      this.part.set(opts.carry);
      this.filled = opts.carry.byteLength;
    }
  }

  /** The part size, 0 until sized. */
  get size(): number {
    return this.partBytes;
  }

  // Once, when the first 8 MiB are in hand: the part size for the whole object.
  private sizeParts(): void {
    const expected = this.expectedBytes();
    if (expected > MAX_PARTS * MAX_PART_BYTES) {
      throw new Error(
        `the export would be about ${Math.round(expected / 1e9)} GB, more than object storage takes in one file ` +
          `(${MAX_PARTS} parts of ${MAX_PART_BYTES / MiB} MiB): narrow its range or filter by event name`,
      );
    }
    this.partBytes = partBytesFor(expected);
    if (this.partBytes > this.part.byteLength) {
      const grown = new Uint8Array(this.partBytes);
      grown.set(this.part.subarray(0, this.filled));
      this.part = grown;
    }
  }

  private async flush(): Promise<void> {
    if (this.nextPart > MAX_PARTS) {
      throw new Error(
        `the export outgrew ${MAX_PARTS} parts of ${this.partBytes / MiB} MiB: narrow its range`,
      );
    }
    const number = this.nextPart++;
    const body = this.part.subarray(0, this.filled);
    // The previous part must be stored before this one starts: one upload in flight, two parts held.
    await this.inFlight;
    this.inFlight = this.upload.uploadPart(number, body).then((uploaded) => {
      this.parts.push({ partNumber: uploaded.partNumber, etag: uploaded.etag });
    });
    // Its failure surfaces at the next await of inFlight; not an unhandled rejection meanwhile.
    this.inFlight.catch(() => {});
    this.part = new Uint8Array(Math.max(PART_BYTES, this.partBytes));
    this.filled = 0;
  }

  async write(chunk: Uint8Array): Promise<void> {
    let offset = 0;
    while (offset < chunk.byteLength) {
      const n = Math.min(this.part.byteLength - this.filled, chunk.byteLength - offset);
      this.part.set(chunk.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled === this.part.byteLength) {
        if (this.partBytes === 0) {
          this.sizeParts();
        }
        if (this.filled === this.partBytes) {
          await this.flush();
        }
      }
    }
  }

  /**
   * Ends this writer's stream. `last`: the remaining bytes go up as the object's last part (an empty
   * object gets one empty part). Otherwise they are returned as the carry for the next segment. Either
   * way every part this writer started is stored when it resolves.
   */
  async finish(last: boolean): Promise<Uint8Array> {
    if (this.partBytes === 0) {
      this.sizeParts();
    }
    let carry = new Uint8Array(0);
    if (last) {
      if (this.filled > 0 || this.nextPart === 1) {
        await this.flush();
      }
    } else {
      carry = this.part.slice(0, this.filled);
    }
    await this.inFlight;
    this.parts.sort((a, b) => a.partNumber - b.partNumber);
    return carry;
  }

  /** After a failure: lets an upload still in flight settle (its own failure is the one thrown). */
  async settle(): Promise<void> {
    await this.inFlight.catch(() => {});
  }
}

/**
 * Copies a byte stream into one R2 object through a PartWriter. `observe` sees every chunk as it is
 * read (the export's progress). A failure aborts the upload, so no half-written object is left behind.
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
  const writer = new PartWriter(upload, { firstPart: 1, partBytes: 0, expectedBytes });
  let bytes = 0;
  try {
    for await (const chunk of source) {
      bytes += chunk.byteLength;
      const observed = observe(chunk);
      if (observed) {
        await observed;
      }
      await writer.write(chunk);
    }
    await writer.finish(true);
    await upload.complete(writer.parts);
    return { bytes, parts: writer.parts.length, partBytes: writer.size };
  } catch (err) {
    await writer.settle();
    await upload.abort().catch(() => {});
    throw err;
  }
}
