/**
 * A small async semaphore: at most `max` holders at once, waiters served first come, first
 * served. A waiter whose signal aborts leaves the queue without taking a slot.
 */
export class ConcurrencyLimit {
  readonly max: number;
  #active = 0;
  readonly #waiters: Array<{ grant: () => void }> = [];

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`concurrency must be a positive integer, got ${max}`);
    this.max = max;
  }

  get active(): number {
    return this.#active;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  /** Resolves with a release function once a slot is free. Call the release exactly once. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#active < this.max) {
      this.#active++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.#active++;
          resolve(this.#releaser());
        },
      };
      const onAbort = () => {
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const release = await this.acquire(signal);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active--;
      this.#waiters.shift()?.grant();
    };
  }
}
