import { sleep } from '../client/index.ts';

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
    if (at > now) await sleep(at - now, signal);
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
