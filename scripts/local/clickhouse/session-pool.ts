import { drainPending, Session } from "chdb";

// One chdb connection executes one query at a time, but several connections on
// the same data directory run in parallel and share its tables, so each query
// checks out a connection of its own and waits when all are busy.
export class SessionPool {
  private readonly idle: Session[];
  private readonly waiting: Array<(session: Session) => void> = [];
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly dataDir: string,
    size: number,
  ) {
    this.idle = Array.from({ length: size }, () => new Session(dataDir));
  }

  async run<T>(task: (session: Session) => Promise<T>): Promise<T> {
    let session = await this.checkout();
    try {
      return await task(session);
    } catch (err) {
      session = this.replace(session);
      throw err;
    } finally {
      this.release(session);
    }
  }

  track(work: Promise<unknown>): void {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
    for (const session of this.idle.splice(0)) {
      session.close();
    }
    await drainPending();
  }

  private checkout(): Promise<Session> {
    const session = this.idle.pop();
    if (session !== undefined) {
      return Promise.resolve(session);
    }
    return new Promise((resolveSession) => this.waiting.push(resolveSession));
  }

  private release(session: Session): void {
    const next = this.waiting.shift();
    if (next === undefined) {
      this.idle.push(session);
    } else {
      next(session);
    }
  }

  // chdb quirk: when a query fails after producing output (a timeout, a result
  // limit, throwIf), that partial output stays buffered in the connection and
  // is prepended to the next result it returns. A fresh connection costs well
  // under a millisecond, so any failure retires the one it ran on.
  private replace(session: Session): Session {
    session.close();
    return new Session(this.dataDir);
  }
}
