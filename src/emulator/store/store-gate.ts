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

  /** Undefined when the store is free; otherwise resolves once it is. */
  whenFree(): Promise<void> | undefined {
    return this.#held === undefined ? undefined : this.#waitFree();
  }

  async #waitFree(): Promise<void> {
    while (this.#held !== undefined) await this.#held;
  }

  /** Runs `work` alone: after the holder before it, and with every other request held back. */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    await this.whenFree();
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
