import type { Exchange } from './probe.ts';

/** A rule was broken: what was sent, what the rule wants, what came back. */
export class CheckFailure extends Error {
  readonly exchange: Exchange | undefined;
  readonly expected: string;
  readonly actual: string;
  constructor(what: string, expected: string, actual: string, exchange?: Exchange) {
    super(what);
    this.name = 'CheckFailure';
    this.expected = expected;
    this.actual = actual;
    this.exchange = exchange;
  }
}
