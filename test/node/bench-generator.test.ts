import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

type Shape = {
  expected: {
    monthlyPlayers: number;
    dailyPlayers: number;
    sessions: number;
    events: number;
    d1: number;
    d7: number;
    d30: number;
  };
  measured: Record<string, number>;
  deterministic: boolean;
};

describe("the bench generator looks like a game (scripts/bench/analytics-data.ts)", () => {
  it("sessions of 30–300 events on one device, maps in order, heartbeats every 10 s, players returning over days", async () => {
    // Its own process: chdb binds one data directory per process. A 45-day span, so that D30 has
    // cohorts; statements of about 100,000 events, so that the load takes several.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "scripts/bench/analytics-shape.ts"],
      {
        cwd: ROOT,
        timeout: 280_000,
        env: {
          ...process.env,
          BENCH_SHAPE_EVENTS: "300000",
          BENCH_SHAPE_OTHER_EVENTS: "30000",
          BENCH_SPAN_DAYS: "45",
          BENCH_SHAPE_TWICE: "1",
          BENCH_CHUNK: "100000",
          BENCH_PROFILE: "game",
          BENCH_PLAYERS: "",
        },
      },
    );
    const shape = JSON.parse(stdout.trim().split("\n").at(-1) as string) as Shape;
    const m = shape.measured;
    const e = shape.expected;
    const near = (value: number, target: number, share: number) => {
      expect(value).toBeGreaterThanOrEqual(target * (1 - share));
      expect(value).toBeLessThanOrEqual(target * (1 + share));
    };

    // Sessions: 30–300 events (the Pareto's mean 37), each on one device, one build, one player.
    expect(m.min_events).toBeGreaterThanOrEqual(30);
    expect(m.max_events).toBeLessThanOrEqual(300);
    near(m.mean_events as number, 37, 0.05);
    expect([m.max_platforms, m.max_devices, m.max_builds, m.max_players]).toEqual([1, 1, 1, 1]);
    // Every session starts with session_start, walks each of its maps once, and beats every 10 s.
    expect(m.starting_with_session_start).toBe(1);
    expect(m.maps_in_order).toBe(1);
    expect(m.median_heartbeat_gap_s).toBe(10);
    // Players keep one or two devices for life (30 % own two; some never play on the second).
    expect(m.max_devices_per_player).toBe(2);
    expect(m.two_device_players).toBeGreaterThan(0.1);
    expect(m.two_device_players).toBeLessThan(0.3);
    // 1.5 sessions per player-day (1 + a geometric draw, at most 4).
    expect(m.sessions_per_player_day).toBeGreaterThan(1.35);
    expect(m.sessions_per_player_day).toBeLessThan(1.65);
    // The return decay of the players first seen in the span: D1 ≈ 38 %, D7 ≈ 14 %, D30 ≈ 6.6 %.
    expect([e.d1, e.d7, e.d30]).toEqual([0.384, 0.142, 0.066]);
    expect(m.d1).toBeGreaterThan(0.32);
    expect(m.d1).toBeLessThan(0.45);
    expect(m.d7).toBeGreaterThan(0.09);
    expect(m.d7).toBeLessThan(0.2);
    expect(m.d30).toBeGreaterThan(0.02);
    expect(m.d30).toBeLessThan(0.12);
    expect(m.first_seen_on_first_day).toBe(1);
    // The profile's targets at this scale: players a day and over the last 30 days, sessions, events.
    expect(e.monthlyPlayers / e.dailyPlayers).toBeGreaterThan(6);
    expect(e.monthlyPlayers / e.dailyPlayers).toBeLessThan(7.5);
    near(m.daily_players as number, e.dailyPlayers, 0.15);
    near(m.monthly_players as number, e.monthlyPlayers, 0.15);
    near(m.sessions as number, e.sessions, 0.1);
    near(m.events as number, e.events, 0.1);
    near(e.events, 300_000, 0.05);
    // The other projects' events went to the three others, none to the main project.
    expect(m.projects).toBe(4);
    expect(m.main).toBe(m.events);
    // The same plan loaded again, half of it and then grown by the other half, gives the same events
    // (hashes of numbers, no randomness; a growth adds to the same sessions, no event twice).
    expect(shape.deterministic).toBe(true);
  }, 300_000);
});
