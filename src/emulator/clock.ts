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
