// Tiny images built by hand, byte by byte, so tests control exactly what the header says.

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) {
    c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return c >>> 0;
});

function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) {
    c = (CRC_TABLE[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  }
  return (c ^ 0xffffffff) >>> 0;
}

export function concat(...parts: Array<Uint8Array | number[]>): Uint8Array {
  const arrays = parts.map((p) => (p instanceof Uint8Array ? p : Uint8Array.from(p)));
  const out = new Uint8Array(arrays.reduce((n, a) => n + a.byteLength, 0));
  let at = 0;
  for (const a of arrays) {
    out.set(a, at);
    at += a.byteLength;
  }
  return out;
}

const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));
const be32 = (n: number) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const be16 = (n: number) => [(n >>> 8) & 0xff, n & 0xff];
const le16 = (n: number) => [n & 0xff, (n >>> 8) & 0xff];
const le24 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff];
const le32 = (n: number) => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];

function pngChunk(type: string, data: Uint8Array | number[]): Uint8Array {
  const body = concat(ascii(type), data);
  return concat(be32(body.byteLength - 4), body, be32(crc32(body)));
}

async function zlib(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** A complete, decodable PNG: 8-bit grayscale, all black, `width` x `height`. */
export async function png(width: number, height: number): Promise<Uint8Array> {
  const scanlines = new Uint8Array(height * (width + 1)); // filter byte 0 + one byte per pixel
  return concat(
    [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    pngChunk("IHDR", [...be32(width), ...be32(height), 8, 0, 0, 0, 0]),
    pngChunk("IDAT", await zlib(scanlines)),
    pngChunk("IEND", []),
  );
}

const segment = (marker: number, data: number[] | Uint8Array) =>
  concat([0xff, marker], be16(data.length + 2), data);

/**
 * A JPEG whose marker structure is complete (SOI, APP0, an optional large APP1 to skip, DQT, SOFn, DHT,
 * SOS, EOI); its entropy-coded data is a token few bytes, not a decodable scan.
 */
export function jpeg(width: number, height: number, opts: { sof?: number; app1Bytes?: number } = {}) {
  const jfif = [...ascii("JFIF"), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0];
  const quant = [0, ...Array.from({ length: 64 }, () => 1)];
  const frame = [8, ...be16(height), ...be16(width), 1, 1, 0x11, 0];
  const huffman = [0x00, 1, ...Array.from({ length: 15 }, () => 0), 0];
  return concat(
    [0xff, 0xd8],
    segment(0xe0, jfif),
    opts.app1Bytes ? segment(0xe1, new Uint8Array(opts.app1Bytes)) : [],
    segment(0xdb, quant),
    [0xff], // a fill byte before the frame marker is legal
    segment(opts.sof ?? 0xc0, frame),
    segment(0xc4, huffman),
    segment(0xda, [1, 1, 0, 0, 0x3f, 0]),
    [0x00, 0x00],
    [0xff, 0xd9],
  );
}

function riff(chunks: Uint8Array): Uint8Array {
  return concat(ascii("RIFF"), le32(chunks.byteLength + 4), ascii("WEBP"), chunks);
}

function riffChunk(type: string, data: number[]): Uint8Array {
  const padded = data.length % 2 ? [...data, 0] : data;
  return concat(ascii(type), le32(data.length), padded);
}

/** WebP containers with the header of each bitstream kind; the bitstream after the header is a token. */
export function webp(width: number, height: number, kind: "VP8" | "VP8L" | "VP8X"): Uint8Array {
  const lossless = riffChunk("VP8L", [0x2f, ...le32((width - 1) | ((height - 1) << 14)), 0, 0, 0]);
  if (kind === "VP8L") {
    return riff(lossless);
  }
  if (kind === "VP8") {
    const frameTag = [0x50, 0x02, 0x00];
    return riff(riffChunk("VP8 ", [...frameTag, 0x9d, 0x01, 0x2a, ...le16(width), ...le16(height), 0, 0]));
  }
  return riff(concat(riffChunk("VP8X", [0, 0, 0, 0, ...le24(width - 1), ...le24(height - 1)]), lossless));
}

export type Part = { name: string; value: string } | { name: string; filename: string; bytes: Uint8Array };

/** A multipart/form-data body assembled by hand, so its exact bytes and length are known. */
export function multipart(parts: Part[]): { body: Uint8Array; contentType: string } {
  const boundary = `----test${crypto.randomUUID().replaceAll("-", "")}`;
  const enc = new TextEncoder();
  const pieces: Uint8Array[] = [];
  for (const p of parts) {
    const disposition =
      "filename" in p
        ? `form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: application/octet-stream`
        : `form-data; name="${p.name}"`;
    pieces.push(enc.encode(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`));
    pieces.push("filename" in p ? p.bytes : enc.encode(p.value));
    pieces.push(enc.encode("\r\n"));
  }
  pieces.push(enc.encode(`--${boundary}--\r\n`));
  return { body: concat(...pieces), contentType: `multipart/form-data; boundary=${boundary}` };
}
