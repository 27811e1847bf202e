// The device context (DeviceContext: batch field 2), collected once per page: what threshold profiles
// filter on (gpu, resolution, memory) and what the browser tells about the OS. Nothing identifies a
// person: no user agent string, no fingerprinting beyond what a profile needs.
import type { WireDevice } from "./encode.js";

type NavigatorExtras = Navigator & {
  deviceMemory?: number;
  userAgentData?: { platform?: string; mobile?: boolean };
};

/** The GPU's renderer string, unmasked where WEBGL_debug_renderer_info allows. */
export function gpuName(gl?: WebGLRenderingContext | WebGL2RenderingContext): string | undefined {
  // A context of our own when the game gave none; released at once.
  const own = gl ? null : document.createElement("canvas").getContext("webgl");
  try {
    const ctx = gl ?? own;
    if (!ctx) {
      return undefined;
    }
    const info = ctx.getExtension("WEBGL_debug_renderer_info");
    return String(ctx.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : ctx.RENDERER) ?? "") || undefined;
  } catch {
    return undefined;
  } finally {
    own?.getExtension("WEBGL_lose_context")?.loseContext();
  }
}

/** The OS and its version as the user agent gives them, e.g. "Windows 10", "macOS 14.4", "Android 14". */
export function osVersion(ua: string, platform?: string): string | undefined {
  const rules: [RegExp, string][] = [
    [/Windows NT (\d+\.\d+)/, "Windows"],
    [/(?:iPhone|CPU) OS (\d+[_.]\d+)/, "iOS"],
    [/Mac OS X (\d+[_.]\d+(?:[_.]\d+)?)/, "macOS"],
    [/Android (\d+(?:\.\d+)?)/, "Android"],
    [/CrOS \S+ (\d+)/, "ChromeOS"],
  ];
  for (const [re, name] of rules) {
    const m = re.exec(ua);
    if (m?.[1]) {
      const v = m[1].replace(/_/g, ".");
      return `${name} ${name === "Windows" && v === "10.0" ? "10" : v}`;
    }
  }
  return /Linux/.test(ua) ? "Linux" : platform || undefined;
}

export function collectDevice(opts: {
  buildConfig?: string;
  gl?: WebGLRenderingContext | WebGL2RenderingContext;
}): WireDevice {
  if (typeof navigator === "undefined") {
    return { buildConfig: opts.buildConfig };
  }
  const nav = navigator as NavigatorExtras;
  const dpr = typeof devicePixelRatio === "number" ? devicePixelRatio : 1;
  const screenSize =
    typeof screen === "undefined"
      ? undefined
      : `${Math.round(screen.width * dpr)}x${Math.round(screen.height * dpr)}`;
  return {
    resolution: screenSize,
    buildConfig: opts.buildConfig,
    gpu: typeof document === "undefined" ? undefined : gpuName(opts.gl),
    cpu: nav.hardwareConcurrency ? `${nav.hardwareConcurrency} threads` : undefined,
    osVersion: osVersion(nav.userAgent ?? "", nav.userAgentData?.platform),
    deviceModel: nav.userAgentData?.mobile ? "mobile" : undefined,
    memoryTotalMb: nav.deviceMemory ? Math.round(nav.deviceMemory * 1024) : undefined,
  };
}
