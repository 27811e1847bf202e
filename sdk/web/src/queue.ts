// The batches not yet delivered: in memory (what the sender and pagehide read, synchronously) and
// mirrored into IndexedDB, so they survive a reload, a crash or a session offline. A stored batch keeps
// its exact events, so sending it again after a reload gives ingest the same bytes, which it
// deduplicates: a batch whose answer was lost is not stored twice.

export type Batch = {
  /** Key in IndexedDB (sealing time in µs, roughly); assigned when queued. */
  id?: number;
  /** Encoded GameTelemetryEvents. */
  events: Uint8Array[];
  /** The batch's DeviceContext (field 2), encoded. */
  device?: Uint8Array;
  /** Milliseconds since the epoch when sealed; old batches are discarded (ingest refuses events > 30 days). */
  sealedAt: number;
};

/** Ingest refuses events more than 30 days old; a stored batch is given up a day before that. */
export const MAX_BATCH_AGE_MS = 29 * 24 * 3600 * 1000;

const STORE = "batches";

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

export class BatchQueue {
  readonly batches: Batch[] = [];
  private db: Promise<IDBDatabase | undefined>;
  /** Starts at random so two tabs sealing in the same millisecond do not pick the same key. */
  private seq = Math.floor(Math.random() * 1000);

  /**
   * `name` keys the IndexedDB database (one per endpoint and key); with `persist` false, or where
   * IndexedDB is missing or refused (some private modes), the queue lives in memory only.
   */
  constructor(
    name: string,
    persist: boolean,
    private readonly maxEvents: number,
    private readonly onDropped: (events: number, why: string) => void,
  ) {
    this.db = persist && typeof indexedDB !== "undefined" ? this.open(name) : Promise.resolve(undefined);
  }

  private async open(name: string): Promise<IDBDatabase | undefined> {
    try {
      const open = indexedDB.open(name, 1);
      open.onupgradeneeded = () => open.result.createObjectStore(STORE, { keyPath: "id" });
      return await request(open);
    } catch {
      return undefined;
    }
  }

  /** Loads what earlier pages left (oldest first), ahead of anything queued since. */
  async load(now = Date.now()): Promise<void> {
    const db = await this.db;
    if (!db) {
      return;
    }
    try {
      const stored: Batch[] = await request(db.transaction(STORE).objectStore(STORE).getAll());
      const known = new Set(this.batches.map((b) => b.id));
      const fresh: Batch[] = [];
      for (const b of stored) {
        if (now - b.sealedAt > MAX_BATCH_AGE_MS) {
          void this.remove(b);
          this.onDropped(b.events.length, "older than ingest accepts");
        } else if (!known.has(b.id)) {
          fresh.push(b);
        }
      }
      this.batches.unshift(...fresh);
      this.trim();
    } catch {
      // Unreadable storage: what this page queues is still sent.
    }
  }

  get events(): number {
    return this.batches.reduce((n, b) => n + b.events.length, 0);
  }

  /** Queues a batch at the end (or at `index`), dropping the oldest when the bound is passed. */
  add(b: Batch, index = this.batches.length): Promise<void> {
    // Ordered by time, and unique across the tabs of one game that share the database.
    b.id = Date.now() * 1000 + (this.seq++ % 1000);
    this.batches.splice(index, 0, b);
    const write = this.write((s) => s.put(b));
    this.trim();
    return write;
  }

  remove(b: Batch): Promise<void> {
    const i = this.batches.indexOf(b);
    if (i >= 0) {
      this.batches.splice(i, 1);
    }
    return this.write((s) => s.delete(b.id ?? 0));
  }

  /** Replaces a batch by its two halves, in its place. */
  async split(b: Batch): Promise<void> {
    const i = this.batches.indexOf(b);
    const half = Math.ceil(b.events.length / 2);
    await this.remove(b);
    const at = Math.max(0, i);
    await this.add({ ...b, id: undefined, events: b.events.slice(0, half) }, at);
    await this.add({ ...b, id: undefined, events: b.events.slice(half) }, at + 1);
  }

  private trim(): void {
    let over = this.events - this.maxEvents;
    while (over > 0 && this.batches.length > 1) {
      const oldest = this.batches[0] as Batch;
      over -= oldest.events.length;
      void this.remove(oldest);
      this.onDropped(oldest.events.length, "the offline queue is full");
    }
  }

  private async write(op: (s: IDBObjectStore) => IDBRequest): Promise<void> {
    const db = await this.db;
    if (!db) {
      return;
    }
    try {
      const tx = db.transaction(STORE, "readwrite");
      op(tx.objectStore(STORE));
      await new Promise<void>((resolve, reject) => {
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error);
        tx.onabort = () => reject(tx.error);
      });
    } catch {
      // Storage full or refused: the batch is still held in memory for this page.
    }
  }
}
