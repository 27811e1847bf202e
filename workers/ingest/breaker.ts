import { type Dependency, DependencyDown, dependencyDownIn } from "../shared/errors.js";

/**
 * A per-isolate circuit breaker in front of one dependency: once a call finds it down, calls for the
 * next `openMs` fail at once with DependencyDown instead of each waiting for a refusal or a timeout,
 * then one call at a time is let through again. Callers with something to fall back on (the ingest
 * Worker's key replica) then answer at their usual speed through an outage.
 */
export class Breaker {
  private openUntil = 0;

  constructor(
    private readonly dependency: Dependency,
    private readonly openMs: number,
  ) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const now = Date.now();
    if (now < this.openUntil) {
      throw new DependencyDown(this.dependency);
    }
    try {
      return await fn();
    } catch (err) {
      if (dependencyDownIn(err)) {
        this.openUntil = Date.now() + this.openMs;
      }
      throw err;
    }
  }
}
