import { describe, expect, it } from "vitest";
import { inspectImage } from "../../workers/api/routes/maps/image-header.js";
import { concat, jpeg, png, webp } from "../support/images.js";

describe("inspectImage", () => {
  it("reads PNG IHDR", async () => {
    expect(inspectImage(await png(320, 200))).toEqual({ contentType: "image/png", width: 320, height: 200 });
  });

  it("reads JPEG frame headers past APP segments and fill bytes, baseline and progressive", () => {
    expect(inspectImage(jpeg(1024, 768))).toEqual({ contentType: "image/jpeg", width: 1024, height: 768 });
    expect(inspectImage(jpeg(65535, 1, { sof: 0xc2, app1Bytes: 60_000 }))).toEqual({
      contentType: "image/jpeg",
      width: 65535,
      height: 1,
    });
  });

  it("reads WebP VP8, VP8L and VP8X headers", () => {
    expect(inspectImage(webp(300, 150, "VP8"))).toEqual({
      contentType: "image/webp",
      width: 300,
      height: 150,
    });
    expect(inspectImage(webp(16384, 1, "VP8L"))).toEqual({
      contentType: "image/webp",
      width: 16384,
      height: 1,
    });
    expect(inspectImage(webp(20000, 9000, "VP8X"))).toEqual({
      contentType: "image/webp",
      width: 20000,
      height: 9000,
    });
  });

  it("refuses unknown signatures, truncated headers and empty images", async () => {
    const full = await png(4, 4);
    const cases: Array<[Uint8Array, RegExp]> = [
      [new TextEncoder().encode("GIF89a........"), /unrecognized/],
      [new Uint8Array(), /unrecognized/],
      [full.slice(0, 23), /truncated or malformed PNG/],
      [jpeg(10, 10).slice(0, 30), /truncated JPEG/],
      [concat([0xff, 0xd8, 0xff, 0xda, 0, 2]), /no frame header/],
      [concat([0xff, 0xd8, 0x00]), /unrecognized/],
      [concat([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x01]), /segment length 1/],
      [jpeg(0, 10), /empty image/],
      [webp(10, 10, "VP8X").slice(0, 29), /truncated WebP/],
      [webp(10, 10, "VP8").slice(0, 29), /truncated WebP/],
      [webp(10, 10, "VP8L").slice(0, 24), /truncated WebP/],
      [
        concat(webp(10, 10, "VP8").slice(0, 12), new TextEncoder().encode("ALPH"), new Uint8Array(20)),
        /unsupported WebP/,
      ],
    ];
    for (const [bytes, problem] of cases) {
      const r = inspectImage(bytes);
      expect("problem" in r && r.problem, `${problem}`).toMatch(problem);
    }
    const zero = concat(full.slice(0, 16), [0, 0, 0, 0], full.slice(20));
    expect(inspectImage(zero)).toEqual({ problem: expect.stringMatching(/empty image \(0x4\)/) });
  });
});
