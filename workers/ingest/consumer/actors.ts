import type { ActorIds, ActorNumbers } from "../../shared/actors.js";
import { dayOfUs } from "../../shared/actors.js";
import type { RowNumbering, RowSink } from "./wire-rows.js";

/**
 * The players and sessions of a delivery, for their dense numbers (workers/shared/actors.ts). The row
 * builder (./wire-rows.ts) hands each row's session_id and player_id spans to a SliceNumbers while it
 * walks the wire bytes anyway; their UTF-8 bytes are deduped in a hash table, so a JS string is made
 * once per distinct id, never per event, and the row gets 8 placeholder bytes. Before a slice of rows
 * is inserted, the ids new in it are numbered by the project's object (one call per project per slice:
 * one per delivery unless it holds more than INSERT_ROWS rows) and the placeholders are filled in.
 */

/** The distinct ids of one kind of one project in a delivery, in the order first met. */
export class ActorSet {
  /** The ids by slot. */
  readonly ids: string[] = [];
  /** Per slot: UTC day number of its latest event in this delivery. */
  readonly days: number[] = [];
  /** Numbers of the slots numbered so far (a prefix of the slots). */
  readonly numbers: number[] = [];
  /** Slots already sent to the object (a prefix; their numbers may still be on the way). */
  private sent = 0;
  /** Sent slots whose latest day moved on since: sent again, for the object's latest day. */
  private moved: number[] = [];
  private bytes = new Uint8Array(1024);
  private mine: DataView<ArrayBufferLike> = new DataView(this.bytes.buffer);
  private used = 0;
  private starts = new Int32Array(32);
  private ends = new Int32Array(32);
  /** Open addressing: slot + 1 by hash (0: empty). */
  private table = new Int32Array(64);
  private last = -1;
  /** A view of the batch being walked (kept while the same batch is passed). */
  private batch: Uint8Array<ArrayBufferLike> = this.bytes;
  private view: DataView<ArrayBufferLike> = this.mine;

  get size(): number {
    return this.ids.length;
  }

  /** `slotOf`, trying `hint` (a slot, or -1) first: the player last seen in the row's session. */
  slotOfHinted(b: Uint8Array, s: number, e: number, day: number, hint: number): number {
    if (hint >= 0 && b === this.batch && this.equals(hint, b, s, e - s)) {
      return this.seen(hint, day);
    }
    return this.slotOf(b, s, e, day);
  }

  /** The slot of the id whose UTF-8 bytes are b[s, e), added if new; `day` its event's day. */
  slotOf(b: Uint8Array, s: number, e: number, day: number): number {
    const len = e - s;
    if (b !== this.batch) {
      this.batch = b;
      this.view = new DataView(b.buffer, b.byteOffset, b.byteLength);
    }
    // Events of one session and player come in runs: the previous id first.
    if (this.last >= 0 && this.equals(this.last, b, s, len)) {
      return this.seen(this.last, day);
    }
    const h = this.hashOf(this.view, s, len);
    const mask = this.table.length - 1;
    let at = h & mask;
    for (;;) {
      const v = this.table[at] as number;
      if (v === 0) {
        break;
      }
      if (this.equals(v - 1, b, s, len)) {
        this.last = v - 1;
        return this.seen(v - 1, day);
      }
      at = (at + 1) & mask;
    }
    const slot = this.add(b, s, e, day);
    this.table[at] = slot + 1;
    if (2 * this.ids.length > this.table.length) {
      this.rehash();
    }
    this.last = slot;
    return slot;
  }

  private seen(slot: number, day: number): number {
    if (day > (this.days[slot] as number)) {
      this.days[slot] = day;
      if (slot < this.sent) {
        this.moved.push(slot);
      }
    }
    return slot;
  }

  /**
   * What the object must hear: the ids not numbered yet, in first-seen order, then the numbered ones
   * whose latest day moved on (their numbers come back unchanged), each with its latest day.
   */
  pending(): { ids: string[]; days: number[]; fresh: number } {
    const from = this.sent;
    const again = [...new Set(this.moved)];
    this.moved = [];
    this.sent = this.ids.length;
    const slots = [...Array.from({ length: this.ids.length - from }, (_, i) => from + i), ...again];
    return {
      ids: slots.map((i) => this.ids[i] as string),
      days: slots.map((i) => this.days[i] as number),
      fresh: this.ids.length - from,
    };
  }

  /** The object's numbers for the first `fresh` ids of the last `pending()`. */
  numbered(numbers: number[], fresh: number): void {
    for (let i = 0; i < fresh; i++) {
      this.numbers.push(numbers[i] as number);
    }
  }

  /**
   * Whether the slot's id is b[s, s + len): four bytes at a time from the end (ids that share a prefix,
   * UUIDv7's time or "player_", differ there first), then the first len % 4 bytes.
   */
  private equals(slot: number, b: Uint8Array, s: number, len: number): boolean {
    const at = this.starts[slot] as number;
    if ((this.ends[slot] as number) - at !== len) {
      return false;
    }
    const mine = this.mine;
    const theirs = this.view;
    let i = len - 4;
    for (; i >= 0; i -= 4) {
      if (mine.getUint32(at + i, true) !== theirs.getUint32(s + i, true)) {
        return false;
      }
    }
    for (i += 3; i >= 0; i--) {
      if (this.bytes[at + i] !== b[s + i]) {
        return false;
      }
    }
    return true;
  }

  /** A hash of an id for the table: its length and its first and last four bytes (collisions cost a compare). */
  private hashOf(v: DataView<ArrayBufferLike>, s: number, len: number): number {
    let h = Math.imul(0x9e3779b1, len + 1);
    if (len >= 4) {
      h = Math.imul(h ^ v.getUint32(s, true), 0x85ebca6b);
      h = Math.imul(h ^ v.getUint32(s + len - 4, true), 0xc2b2ae35);
    } else {
      for (let i = 0; i < len; i++) {
        h = Math.imul(h ^ v.getUint8(s + i), 0x01000193);
      }
    }
    return h ^ (h >>> 16);
  }

  private add(b: Uint8Array, s: number, e: number, day: number): number {
    const slot = this.ids.length;
    const len = e - s;
    if (this.used + len > this.bytes.length) {
      const next = new Uint8Array(Math.max(2 * this.bytes.length, this.used + len));
      next.set(this.bytes.subarray(0, this.used));
      this.bytes = next;
      this.mine = new DataView(next.buffer);
    }
    if (slot === this.starts.length) {
      const starts = new Int32Array(2 * slot);
      const ends = new Int32Array(2 * slot);
      starts.set(this.starts);
      ends.set(this.ends);
      this.starts = starts;
      this.ends = ends;
    }
    const id = b.subarray(s, e);
    this.bytes.set(id, this.used);
    this.starts[slot] = this.used;
    this.ends[slot] = this.used + len;
    this.used += len;
    this.ids.push(DECODER.decode(id));
    this.days.push(day);
    return slot;
  }

  private rehash(): void {
    const table = new Int32Array(2 * this.table.length);
    const mask = table.length - 1;
    for (let slot = 0; slot < this.ids.length; slot++) {
      const start = this.starts[slot] as number;
      let at = this.hashOf(this.mine, start, (this.ends[slot] as number) - start) & mask;
      while (table[at] !== 0) {
        at = (at + 1) & mask;
      }
      table[at] = slot + 1;
    }
    this.table = table;
  }
}

const DECODER = new TextDecoder();

/** A project's players and sessions in a delivery, and the numbers its object gave them so far. */
export class ProjectActors {
  readonly players = new ActorSet();
  readonly sessions = new ActorSet();

  /** Per session slot: the player slot of its last row + 1 (0: none yet). */
  private sessionPlayer = new Int32Array(32);

  constructor(readonly projectId: string) {}

  playerOfSession(session: number): number {
    return session < this.sessionPlayer.length ? (this.sessionPlayer[session] as number) - 1 : -1;
  }

  setPlayerOfSession(session: number, player: number): void {
    if (session >= this.sessionPlayer.length) {
      const next = new Int32Array(Math.max(2 * this.sessionPlayer.length, session + 1));
      next.set(this.sessionPlayer);
      this.sessionPlayer = next;
    }
    this.sessionPlayer[session] = player + 1;
  }

  /**
   * Asks `number` (the project's object) for what it has not heard yet: new ids, and numbered ones
   * whose latest day moved on. No call when there is nothing.
   */
  async numberWith(number: (ids: ActorIds) => Promise<ActorNumbers>): Promise<void> {
    const players = this.players.pending();
    const sessions = this.sessions.pending();
    if (!players.ids.length && !sessions.ids.length) {
      return;
    }
    const answer = await number({
      players: players.ids,
      playerDays: players.days,
      sessions: sessions.ids,
      sessionDays: sessions.days,
    });
    this.players.numbered(answer.players, players.fresh);
    this.sessions.numbered(answer.sessions, sessions.fresh);
  }
}

/**
 * The rows of one INSERT slice: for each row, where its numbers go in the slice's bytes, its project and
 * its player and session slots. `project` is the project of the message being built.
 */
export class SliceNumbers implements RowNumbering {
  project: ProjectActors | null = null;
  readonly projects: ProjectActors[] = [];
  private n = 0;
  private at = new Int32Array(1024);
  private who = new Int32Array(1024);
  private playerSlot = new Int32Array(1024);
  private sessionSlot = new Int32Array(1024);
  private whoOf = new Map<ProjectActors, number>();
  private current = -1;

  /** The rows recorded so far (a mark to go back to when a message turns out unreadable). */
  get rows(): number {
    return this.n;
  }

  set rows(mark: number) {
    this.n = mark;
  }

  forProject(project: ProjectActors): void {
    let i = this.whoOf.get(project);
    if (i === undefined) {
      i = this.projects.length;
      this.projects.push(project);
      this.whoOf.set(project, i);
    }
    this.project = project;
    this.current = i;
  }

  row(out: RowSink, b: Uint8Array, ss: number, se: number, ps: number, pe: number, tsUs: number): void {
    const project = this.project as ProjectActors;
    const day = dayOfUs(tsUs);
    if (this.n === this.at.length) {
      this.grow();
    }
    const n = this.n++;
    this.at[n] = out.len;
    this.who[n] = this.current;
    const session = project.sessions.slotOf(b, ss, se, day);
    this.sessionSlot[n] = session;
    // The player of an event is its player_id, or its session_id when player_id is empty; most likely
    // the one last seen in the same session.
    const hint = project.playerOfSession(session);
    const player =
      pe > ps
        ? project.players.slotOfHinted(b, ps, pe, day, hint)
        : project.players.slotOfHinted(b, ss, se, day, hint);
    project.setPlayerOfSession(session, player);
    this.playerSlot[n] = player;
    out.u32(0);
    out.u32(0);
  }

  /** Writes every row's numbers into the slice's bytes (each project numbered by then). */
  fill(out: RowSink): void {
    const dv = new DataView(out.buf.buffer, out.buf.byteOffset, out.buf.byteLength);
    const players = this.projects.map((p) => p.players.numbers);
    const sessions = this.projects.map((p) => p.sessions.numbers);
    for (let i = 0; i < this.n; i++) {
      const w = this.who[i] as number;
      const at = this.at[i] as number;
      dv.setUint32(at, (players[w] as number[])[this.playerSlot[i] as number] as number, true);
      dv.setUint32(at + 4, (sessions[w] as number[])[this.sessionSlot[i] as number] as number, true);
    }
  }

  private grow(): void {
    const size = 2 * this.at.length;
    for (const k of ["at", "who", "playerSlot", "sessionSlot"] as const) {
      const next = new Int32Array(size);
      next.set(this[k]);
      this[k] = next;
    }
  }
}
