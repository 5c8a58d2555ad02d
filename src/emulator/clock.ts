/**
 * The times the clock may be set to. Every timestamp the API writes has a four-digit year, so
 * nothing at or after year 10000 can be expressed, and a clock near that end would soon stamp
 * changes (always after the last `asOf` handed out) that no client can read: the upper bound
 * leaves a year of running time before it. The lower bound is the Unix epoch: a poll
 * `since=1970-01-01T00:00Z`, the usual "from the start", must see every change.
 */
export const CLOCK_MIN_MS = Date.UTC(1970, 0, 1);
export const CLOCK_MAX_MS = Date.UTC(9999, 0, 1);

/**
 * The emulator's clock. Tests set it through `/_emulator/clock` to make change timestamps
 * predictable: a fixed time (frozen) or an offset from the real time.
 */
export class Clock {
  #offsetMs = 0;
  #frozenAt: number | undefined;

  now(): number {
    return this.#frozenAt ?? Date.now() + this.#offsetMs;
  }

  /** Sets the current time; a frozen clock stays there until set again or advanced. */
  set(ms: number, frozen: boolean): void {
    if (frozen) {
      this.#frozenAt = ms;
    } else {
      this.#frozenAt = undefined;
      this.#offsetMs = ms - Date.now();
    }
  }

  advance(ms: number): void {
    if (this.#frozenAt !== undefined) this.#frozenAt += ms;
    else this.#offsetMs += ms;
  }

  reset(): void {
    this.#offsetMs = 0;
    this.#frozenAt = undefined;
  }

  get frozen(): boolean {
    return this.#frozenAt !== undefined;
  }
}
