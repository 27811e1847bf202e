// Width, height and type of an uploaded map image, read from its header bytes: no decoder needed,
// and the declared Content-Type of the part is never trusted.

export type ImageType = "image/png" | "image/jpeg" | "image/webp";
export type ImageInfo = { contentType: ImageType; width: number; height: number };
export type ImageCheck = ImageInfo | { problem: string };

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const PNG_MAX_DIMENSION = 0x7fffffff;

const u16be = (b: Uint8Array, i: number) => ((b[i] ?? 0) << 8) | (b[i + 1] ?? 0);
const u16le = (b: Uint8Array, i: number) => (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8);
const u24le = (b: Uint8Array, i: number) => u16le(b, i) | ((b[i + 2] ?? 0) << 16);
const u32be = (b: Uint8Array, i: number) => u16be(b, i) * 0x10000 + u16be(b, i + 2);
const u32le = (b: Uint8Array, i: number) => u16le(b, i) + u16le(b, i + 2) * 0x10000;
const ascii = (b: Uint8Array, i: number, s: string) =>
  b.length >= i + s.length && [...s].every((ch, k) => b[i + k] === ch.charCodeAt(0));

function sized(contentType: ImageType, width: number, height: number): ImageCheck {
  if (width < 1 || height < 1) {
    return { problem: `${contentType} header declares an empty image (${width}x${height})` };
  }
  return { contentType, width, height };
}

function png(b: Uint8Array): ImageCheck {
  // The first chunk must be IHDR (13 bytes): width and height are its first two big-endian u32s.
  if (b.length < 24 || !ascii(b, 12, "IHDR") || u32be(b, 8) !== 13) {
    return { problem: "truncated or malformed PNG header (no IHDR chunk)" };
  }
  const width = u32be(b, 16);
  const height = u32be(b, 20);
  if (width > PNG_MAX_DIMENSION || height > PNG_MAX_DIMENSION) {
    return { problem: "PNG dimensions exceed 2^31-1" };
  }
  return sized("image/png", width, height);
}

// SOF0..SOF15 carry the frame size, except DHT (C4), JPG (C8) and DAC (CC), which share the range.
const isStartOfFrame = (m: number) => m >= 0xc0 && m <= 0xcf && m !== 0xc4 && m !== 0xc8 && m !== 0xcc;
// Markers without a length: TEM, RST0..7, SOI.
const isStandalone = (m: number) => m === 0x01 || (m >= 0xd0 && m <= 0xd8);

function jpeg(b: Uint8Array): ImageCheck {
  let i = 2;
  while (i < b.length) {
    if (b[i] !== 0xff) {
      return { problem: `malformed JPEG: no marker at byte ${i}` };
    }
    while (b[i] === 0xff) {
      i++; // fill bytes may precede a marker
    }
    if (i >= b.length) {
      break;
    }
    const marker = b[i++] ?? 0;
    if (isStandalone(marker)) {
      continue;
    }
    if (marker === 0xd9 || marker === 0xda) {
      return { problem: "JPEG has no frame header (SOF) before its image data" };
    }
    if (i + 2 > b.length) {
      break;
    }
    const length = u16be(b, i);
    if (length < 2) {
      return { problem: `malformed JPEG: segment length ${length} at byte ${i}` };
    }
    if (isStartOfFrame(marker)) {
      // length(2) precision(1) height(2) width(2) components(1)...
      if (length < 8 || i + 7 > b.length) {
        break;
      }
      return sized("image/jpeg", u16be(b, i + 5), u16be(b, i + 3));
    }
    i += length;
  }
  return { problem: "truncated JPEG: ends before its frame header (SOF)" };
}

function webp(b: Uint8Array): ImageCheck {
  const truncated = { problem: "truncated WebP header" };
  if (ascii(b, 12, "VP8 ")) {
    // Lossy: 3-byte frame tag, start code 9d 01 2a, then 14-bit width and height.
    if (b.length < 30) {
      return truncated;
    }
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) {
      return { problem: "malformed WebP: VP8 start code missing" };
    }
    return sized("image/webp", u16le(b, 26) & 0x3fff, u16le(b, 28) & 0x3fff);
  }
  if (ascii(b, 12, "VP8L")) {
    // Lossless: signature 0x2f, then width-1 and height-1 as 14-bit fields.
    if (b.length < 25) {
      return truncated;
    }
    if (b[20] !== 0x2f) {
      return { problem: "malformed WebP: VP8L signature missing" };
    }
    const bits = u32le(b, 21);
    return sized("image/webp", (bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
  }
  if (ascii(b, 12, "VP8X")) {
    // Extended: flags(1) reserved(3), then canvas width-1 and height-1 as 24-bit fields.
    if (b.length < 30) {
      return truncated;
    }
    return sized("image/webp", u24le(b, 24) + 1, u24le(b, 27) + 1);
  }
  return b.length < 16 ? truncated : { problem: "unsupported WebP: first chunk is not VP8, VP8L or VP8X" };
}

export function inspectImage(b: Uint8Array): ImageCheck {
  if (PNG_SIGNATURE.every((v, k) => b[k] === v)) {
    return png(b);
  }
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) {
    return jpeg(b);
  }
  if (ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP")) {
    return webp(b);
  }
  return { problem: "must be a PNG, JPEG or WebP image (unrecognized file signature)" };
}
