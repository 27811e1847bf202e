import { expect, it } from "vitest";
import { event } from "../support/batches.js";
import { eraseAndWait } from "../support/erasures.js";
import { ingestAndWait } from "../support/events.js";
import { seedTenant, type Tenant } from "../support/harness.js";
import { api } from "../support/http.js";

// The cached analytics answers (project status, builds, builds/compare: about 60 s each) must not
// outlive a player's erasure: the next read without fresh=1 already leaves the player out. One studio,
// one erasure: every cache is filled before it and read after it.

type Kpis = { totalEvents: number };
type Build = { build_id: string; event_count: number };
type Side = { event_count: number; player_count: number };
type Compared = { baseline: Side; candidate: Side };

let t: Tenant;
// Two days ago: builds and compare read whole days, which end before today.
const AGO = 2 * 86_400;
const ALICE = 4;
const BOB = 3;

async function seed() {
  t = await seedTenant("enterprise", "Erasure Cache Studio");
  const events = [
    ...Array.from({ length: ALICE }, (_, i) => event(i, { playerId: "alice", sessionId: "s-a" }, AGO)),
    ...Array.from({ length: BOB }, (_, i) => event(10 + i, { playerId: "bob", sessionId: "s-b" }, AGO)),
    event(20, { playerId: "bob", sessionId: "s-b", buildId: "build-2" }, AGO),
  ];
  await ingestAndWait(t.projectId, t.keys.ingest.key, events);
}

async function read<T>(path: string): Promise<T> {
  const res = await api(`/v1/projects/${t.projectId}${path}`, { key: t.keys.read.key });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return (JSON.parse(text) as { data: T }).data;
}

const status = async () => (await read<{ kpis: Kpis }>("/status")).kpis;
const builds = () => read<Build[]>("/builds?days=7");
const compare = () => read<Compared>("/builds/compare?baseline=build-1&candidate=build-2&days=7");

async function eraseAlice() {
  expect(await eraseAndWait(t.projectId, t.keys.full.key, "alice")).toMatchObject({
    status: "completed",
    rowsRemoved: ALICE,
  });
}

it("an erasure drops the cached answers it makes stale: project status KPIs, builds, builds/compare", async () => {
  await seed();
  const counts = async () => (await builds()).map((b) => [b.build_id, b.event_count]).sort();
  // Each answer read (and so cached) before the erasure.
  expect(await status()).toMatchObject({ totalEvents: ALICE + BOB + 1 });
  expect(await counts()).toEqual([
    ["build-1", ALICE + BOB],
    ["build-2", 1],
  ]);
  expect((await compare()).baseline).toMatchObject({ event_count: ALICE + BOB, player_count: 2 });
  await eraseAlice();
  expect(await status()).toMatchObject({ totalEvents: BOB + 1 });
  expect(await counts()).toEqual([
    ["build-1", BOB],
    ["build-2", 1],
  ]);
  expect((await compare()).baseline).toMatchObject({ event_count: BOB, player_count: 1 });
});
