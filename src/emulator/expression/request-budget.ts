/**
 * What all the evaluations of one request may spend together. Each evaluation also has a budget of
 * its own (evaluator.ts), which stops only that one: a function field reads null, a guard denies.
 * But a sort or a filter on a function field evaluates every record of a table, so a request of
 * many cheap-enough evaluations could still hold the emulator for minutes. Running out of the
 * request's budget ends the request: it throws what `exhausted` makes (the store answers 400),
 * never an EvaluationError, so nothing reads it as a null value or a denial.
 */

export const REQUEST_STEP_LIMIT = 2_000_000;
export const REQUEST_TIME_LIMIT_MS = 1_000;

export class RequestBudget {
  #steps: number;
  #stepLimit: number;
  #millis: number;
  readonly #exhausted: (reason: string) => Error;
  /** Milliseconds spent in evaluations that have ended. */
  #spent = 0;
  /** Evaluations running now (one inside another counts once), and since when. */
  #depth = 0;
  #since = 0;

  constructor(exhausted: (reason: string) => Error, steps = REQUEST_STEP_LIMIT, millis = REQUEST_TIME_LIMIT_MS) {
    this.#steps = steps;
    this.#stepLimit = steps;
    this.#millis = millis;
    this.#exhausted = exhausted;
  }

  /**
   * Runs one evaluation on this budget's account: only the time spent evaluating counts, not the
   * rest of the request (reading rows, writing the answer).
   */
  run<T>(work: () => T): T {
    if (this.#depth === 0) {
      // An evaluation too short to look at the clock still adds its time: the next one starts over.
      if (this.#spent > this.#millis) throw this.#exhausted(`more than ${this.#millis} ms`);
      this.#since = performance.now();
    }
    this.#depth++;
    try {
      return work();
    } finally {
      if (--this.#depth === 0) this.#spent += performance.now() - this.#since;
    }
  }

  /** More to spend: a request that brings its own work (the rows of a CSV import) earns a share per item. */
  extend(steps: number, millis: number): void {
    this.#steps += steps;
    this.#stepLimit += steps;
    this.#millis += millis;
  }

  charge(steps: number): void {
    this.#steps -= steps;
    if (this.#steps < 0) throw this.#exhausted(`more than ${this.#stepLimit} steps`);
  }

  /** The time now, as an evaluation looks at the clock. */
  checkTime(now: number): void {
    if (this.#depth > 0 && this.#spent + (now - this.#since) > this.#millis) throw this.#exhausted(`more than ${this.#millis} ms`);
  }
}
