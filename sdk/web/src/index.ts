// @game-telemetry/web: telemetry for browser games. One session per page: init() once, then track()
// and the setters from anywhere in the game.
import { Telemetry, type TelemetryOptions, type TelemetryStats, type TrackData } from "./client.js";

export type { AttributeValue, Position } from "./clamp.js";
export {
  SDK_VERSION,
  Telemetry,
  type TelemetryOptions,
  type TelemetryStats,
  type TrackData,
} from "./client.js";
export type { WireDevice as DeviceContext } from "./encode.js";

let current: Telemetry | undefined;

/** Starts the session (session_start, perf_heartbeat every 10 s, device context) and returns it. */
export function init(options: TelemetryOptions): Telemetry {
  if (current) {
    console.warn("[game-telemetry] init() called twice; the first session is ended");
    void current.shutdown();
  }
  current = new Telemetry(options);
  return current;
}

/** Records an event, e.g. track("enemy_killed", { position: [x, y, z], attributes: { weapon: "bow" } }). */
export function track(name: string, data?: TrackData): void {
  current?.track(name, data);
}

export function setMap(mapId: string): void {
  current?.setMap(mapId);
}

export function setPlayer(id: string | null): void {
  current?.setPlayer(id);
}

export function setCamera(yaw: number, pitch: number): void {
  current?.setCamera(yaw, pitch);
}

export function setPosition(x: number, y: number, z?: number): void {
  current?.setPosition(x, y, z);
}

export function flush(): Promise<void> {
  return current?.flush() ?? Promise.resolve();
}

export async function shutdown(): Promise<void> {
  const t = current;
  current = undefined;
  await t?.shutdown();
}

export function stats(): TelemetryStats | undefined {
  return current?.stats();
}
