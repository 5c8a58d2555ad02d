/**
 * The emulator keeps one SQLite connection, and every request runs its transaction without
 * waiting for anything, so requests never overlap inside the store. A write that must wait for
 * I/O in the middle of its transaction (the CSV import reads its file as it writes) holds the
 * store exclusively instead: requests that arrive meanwhile wait at the gate (a preHandler hook)
 * and run once it is done, so none of them runs inside its transaction or sees its rows before
 * the commit.
 */
export class StoreGate {
  #held: Promise<void> | undefined;

  /**
   * Calls `proceed` once the store is free, in the same step as the check, so no holder can take
   * the store between the check and the request's own (synchronous) store work.
   */
  onFree(proceed: () => void): void {
    if (this.#held === undefined) proceed();
    else this.#held.then(() => this.onFree(proceed), () => this.onFree(proceed));
  }

  /** Runs `work` alone: after the holder before it, and with every other request held back. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    // Checked and taken with no await in between: two waiters woken by one release cannot both
    // pass the check.
    while (this.#held !== undefined) await this.#held;
    let release!: () => void;
    this.#held = new Promise((resolve) => {
      release = resolve;
    });
    try {
      return await work();
    } finally {
      this.#held = undefined;
      release();
    }
  }
}
