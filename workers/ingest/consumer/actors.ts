import { type ActorIds, type ActorNumbers, dayOfUs } from "../../shared/actors.js";
import { F, WIRE, tag as wireTag } from "../../shared/telemetry/fields.js";
import { WireReader, wireErrorText } from "../wire/reader.js";
import { MalformedBatch } from "./wire-rows.js";

/**
 * The players and sessions of a delivery, for their dense numbers (workers/shared/actors.ts): one walk
 * per message over the wire bytes that reads only each event's timestamp, session_id and player_id, and
 * dedupes their UTF-8 bytes in a hash table, so a JS string is made once per distinct id, never per
 * event. Each event gets the slot of its player and of its session; the consumer asks the project's
 * object for the slots' numbers (one call per project per delivery) and the row builder writes them.
 */

/** The distinct ids of one kind of one project in a delivery, in the order first met. */
export class ActorSet {
  /** The ids by slot. */
  readonly ids: string[] = [];
  /** Per slot: UTC day number of its latest event in this delivery. */
  readonly days: number[] = [];
  private bytes = new Uint8Array(1 << 14);
  private used = 0;
  private starts = new Int32Array(256);
  private ends = new Int32Array(256);
  /** Open addressing: slot + 1 by hash (0: empty). */
  private table = new Int32Array(1024);
  private last = -1;

  get size(): number {
    return this.ids.length;
  }

  /** The slot of the id whose UTF-8 bytes are b[s, e), added if new; `day` its event's day. */
  slotOf(b: Uint8Array, s: number, e: number, day: number): number {
    const len = e - s;
    // Events of one session and player come in runs: the previous id first.
    if (this.last >= 0 && this.equals(this.last, b, s, len)) {
      return this.seen(this.last, day);
    }
    let h = 0x811c9dc5;
    for (let i = s; i < e; i++) {
      h = Math.imul(h ^ (b[i] as number), 0x01000193);
    }
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
    }
    return slot;
  }

  private equals(slot: number, b: Uint8Array, s: number, len: number): boolean {
    const at = this.starts[slot] as number;
    if ((this.ends[slot] as number) - at !== len) {
      return false;
    }
    const mine = this.bytes;
    for (let i = 0; i < len; i++) {
      if (mine[at + i] !== b[s + i]) {
        return false;
      }
    }
    return true;
  }

  private add(b: Uint8Array, s: number, e: number, day: number): number {
    const slot = this.ids.length;
    const len = e - s;
    if (this.used + len > this.bytes.length) {
      const next = new Uint8Array(Math.max(2 * this.bytes.length, this.used + len));
      next.set(this.bytes.subarray(0, this.used));
      this.bytes = next;
    }
    if (slot === this.starts.length) {
      const starts = new Int32Array(2 * slot);
      const ends = new Int32Array(2 * slot);
      starts.set(this.starts);
      ends.set(this.ends);
      this.starts = starts;
      this.ends = ends;
    }
    this.bytes.set(b.subarray(s, e), this.used);
    this.starts[slot] = this.used;
    this.ends[slot] = this.used + len;
    this.used += len;
    this.ids.push(DECODER.decode(b.subarray(s, e)));
    this.days.push(day);
    return slot;
  }

  private rehash(): void {
    const table = new Int32Array(2 * this.table.length);
    const mask = table.length - 1;
    for (let slot = 0; slot < this.ids.length; slot++) {
      let h = 0x811c9dc5;
      for (let i = this.starts[slot] as number; i < (this.ends[slot] as number); i++) {
        h = Math.imul(h ^ (this.bytes[i] as number), 0x01000193);
      }
      let at = h & mask;
      while (table[at] !== 0) {
        at = (at + 1) & mask;
      }
      table[at] = slot + 1;
    }
    this.table = table;
  }
}

const DECODER = new TextDecoder();

/** A project's players and sessions in a delivery. */
export class ProjectActors {
  readonly players = new ActorSet();
  readonly sessions = new ActorSet();

  /** What the project's object numbers: every id, in first-seen order. */
  ids(): ActorIds {
    return {
      players: this.players.ids,
      playerDays: this.players.days,
      sessions: this.sessions.ids,
      sessionDays: this.sessions.days,
    };
  }
}

/** The slots of one message's events, by event index; the numbers once the object has answered. */
export class MessageActors {
  constructor(
    readonly project: ProjectActors,
    /** Player and session slot of each event, by index. */
    readonly playerSlots: Int32Array,
    readonly sessionSlots: Int32Array,
  ) {}
  /** Numbers by slot (the project's), set once numbered. */
  numbers: { players: Uint32Array; sessions: Uint32Array } | null = null;

  get events(): number {
    return this.playerSlots.length;
  }

  playerIdx(index: number): number {
    return this.numbers?.players[this.playerSlots[index] as number] ?? 0;
  }

  sessionIdx(index: number): number {
    return this.numbers?.sessions[this.sessionSlots[index] as number] ?? 0;
  }
}

/** The object's answer for a project, by slot, on each of its messages. */
export function applyNumbers(messages: MessageActors[], answer: ActorNumbers): void {
  const numbers = { players: Uint32Array.from(answer.players), sessions: Uint32Array.from(answer.sessions) };
  for (const m of messages) {
    m.numbers = numbers;
  }
}

class ActorWalker extends WireReader {}
const w = new ActorWalker();
const TAG_EVENTS = wireTag(F.batch.events, WIRE.LEN);
const TAG_TIMESTAMP = wireTag(F.event.timestamp_us, WIRE.VARINT);
const TAG_SESSION = wireTag(F.event.session_id, WIRE.LEN);
const TAG_PLAYER = wireTag(F.event.player_id, WIRE.LEN);
/** Slots per event of the message being walked (grown as needed, copied out per message). */
let PLAYER_SLOTS = new Int32Array(1024);
let SESSION_SLOTS = new Int32Array(1024);

function fail(code: number): never {
  throw new MalformedBatch(wireErrorText(code));
}

/**
 * Walks one decompressed TelemetryBatch: the slot of each event's player and session in `project`,
 * by event index (the row builder's indexes). The protobuf way, as the row builder reads them: a
 * field's last occurrence wins. Throws MalformedBatch on bytes that do not walk.
 */
export function collectActors(project: ProjectActors, b: Uint8Array): MessageActors {
  const end = b.length;
  let n = 0;
  let p = 0;
  while (p < end) {
    const tag = w.readTag(b, p, end);
    if (tag < 0) {
      fail(w.pos);
    }
    p = w.pos;
    if (tag !== TAG_EVENTS) {
      p = w.skipField(b, p, end, tag & 7);
      if (p < 0) {
        fail(p);
      }
      continue;
    }
    const len = w.readLen(b, p, end);
    if (len < 0) {
      fail(w.pos);
    }
    p = w.pos;
    const e = p + len;
    let ts = 0;
    let ss = 0;
    let se = 0;
    let ps = 0;
    let pe = 0;
    while (p < e) {
      let t = b[p] as number;
      if (t < 0x80) {
        p++;
      } else {
        t = w.readTag(b, p, e);
        if (t < 0) {
          fail(w.pos);
        }
        p = w.pos;
      }
      if (t === TAG_SESSION || t === TAG_PLAYER) {
        const l = w.readLen(b, p, e);
        if (l < 0) {
          fail(w.pos);
        }
        p = w.pos;
        if (t === TAG_SESSION) {
          ss = p;
          se = p + l;
        } else {
          ps = p;
          pe = p + l;
        }
        p += l;
      } else if (t === TAG_TIMESTAMP) {
        p = w.readInt64(b, p, e);
        if (p < 0) {
          fail(p);
        }
        ts = w.num[0] as number;
      } else {
        p = w.skipField(b, p, e, t & 7);
        if (p < 0) {
          fail(p);
        }
      }
    }
    if (n === PLAYER_SLOTS.length) {
      const ps2 = new Int32Array(2 * n);
      const ss2 = new Int32Array(2 * n);
      ps2.set(PLAYER_SLOTS);
      ss2.set(SESSION_SLOTS);
      PLAYER_SLOTS = ps2;
      SESSION_SLOTS = ss2;
    }
    const day = dayOfUs(ts);
    SESSION_SLOTS[n] = project.sessions.slotOf(b, ss, se, day);
    // The player of an event is its player_id, or its session_id when player_id is empty.
    PLAYER_SLOTS[n] =
      pe > ps ? project.players.slotOf(b, ps, pe, day) : project.players.slotOf(b, ss, se, day);
    n++;
  }
  return new MessageActors(project, PLAYER_SLOTS.slice(0, n), SESSION_SLOTS.slice(0, n));
}
