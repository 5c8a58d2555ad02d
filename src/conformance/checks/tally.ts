import { isDeepStrictEqual } from 'node:util';
import type { Observed } from '../check.ts';
import { show } from '../expectations.ts';

// An observation's text stays readable: the first differences, then how many more.
const SHOWN_DIFFERENCES = 5;

/**
 * What an observation check compares with the emulator's documented choice, case by case: the
 * observation says how many cases there were and shows the ones that differ.
 */
export class Tally {
  #cases = 0;
  readonly #differences: string[] = [];

  /** One case: what the endpoint did next to what the emulator does. */
  same(label: string, actual: unknown, emulator: unknown): void {
    this.#cases++;
    if (!isDeepStrictEqual(actual, emulator)) this.#differences.push(`${label}: ${show(actual)} (emulator: ${show(emulator)})`);
  }

  result(what: string): Observed {
    const n = this.#differences.length;
    if (n === 0) return { observed: `${what}: ${this.#cases} case(s), each as the emulator`, asEmulator: true };
    const more = n > SHOWN_DIFFERENCES ? `; and ${n - SHOWN_DIFFERENCES} more` : '';
    return { observed: `${what}: ${n} of ${this.#cases} case(s) differ: ${this.#differences.slice(0, SHOWN_DIFFERENCES).join('; ')}${more}`, asEmulator: false };
  }
}
