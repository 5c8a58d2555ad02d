/**
 * Spaces request starts at least `1 / rate` seconds apart: the suite runs against a workspace
 * somebody uses, so it never bursts. A rate of 0 means unbounded (the embedded emulator).
 */
export class RequestPacer {
  readonly #intervalMs: number;
  #next = 0;

  constructor(ratePerSecond: number) {
    if (!Number.isFinite(ratePerSecond) || ratePerSecond < 0) throw new RangeError(`request rate must be 0 or more, got ${ratePerSecond}`);
    this.#intervalMs = ratePerSecond === 0 ? 0 : 1000 / ratePerSecond;
  }

  async wait(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const now = Date.now();
    const at = Math.max(now, this.#next);
    this.#next = at + this.#intervalMs;
    if (at > now) await delay(at - now, signal);
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
