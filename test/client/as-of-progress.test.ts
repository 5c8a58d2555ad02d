import { describe, expect, it } from 'vitest';
import { AsOfProgress, MAX_AS_OF_JUMP_MS } from '../../src/client/as-of-bounds.ts';
import { InvalidResponseError, type UpstreamCall } from '../../src/errors.ts';

/**
 * `AsOfProgress` on its own, with this machine's wall clock and monotonic clock given per answer:
 * a jump of upstream's clock is refused once, and taken once a later answer continues it.
 */
const NOW = Date.parse('2026-03-01T10:00:00.000Z');
const schemaFeed: UpstreamCall = { endpoint: 'listSchemaChanges', method: 'GET', path: '/api/v1/workspace/w/schema/changes' };
const recordsFeed = (table: string): UpstreamCall => ({
  endpoint: 'listRecordChanges', method: 'GET', path: `/api/v1/workspace/w/modules/shop/tables/${table}/records/changes`,
});
const iso = (ms: number) => new Date(ms).toISOString();
const SINCE = iso(NOW - 3_600_000);

/** One feed's answers, each at `secondsHere` on this machine (wall and monotonic clocks alike). */
function feed(progress: AsOfProgress, call: UpstreamCall = schemaFeed) {
  return (asOfMs: number, secondsHere: number) => () =>
    progress.check(call, SINCE, iso(asOfMs), NOW + secondsHere * 1000, 1_000_000 + secondsHere * 1000);
}
const STEP = 3 * 60_000;

describe('AsOfProgress', () => {
  it('refuses the first answer after a forward step of upstream clock, and takes the next that continues it', () => {
    const answer = feed(new AsOfProgress());
    // Upstream 4 minutes behind this machine, then stepped 3 minutes forward.
    const behind = NOW - 4 * 60_000;
    answer(behind, 0)();
    answer(behind + 1000, 1)();
    expect(answer(behind + 2000 + STEP, 2)).toThrow(/jumped ahead.*the cursor stays/);
    expect(answer(behind + 2000 + STEP, 2)).toThrow(InvalidResponseError);
    // Continues the refused answer's clock: the step is confirmed and becomes the baseline.
    expect(answer(behind + 3000 + STEP, 3)).not.toThrow();
    expect(answer(behind + 4000 + STEP, 4)).not.toThrow();
    // Held against the new baseline from now on.
    expect(answer(behind + 5000 + STEP + MAX_AS_OF_JUMP_MS + 1000, 5)).toThrow(/jumped ahead/);
  });

  it('never takes a single rogue answer: the next answer on the old clock leaves it refused', () => {
    const answer = feed(new AsOfProgress());
    answer(NOW, 0)();
    expect(answer(NOW + 1000 + STEP, 1)).toThrow(/jumped ahead/);
    expect(answer(NOW + 2000, 2)).not.toThrow();
    // The old clock answered after the rogue one: a later answer near the rogue one's clock is a
    // new jump against the old clock, not a confirmation.
    expect(answer(NOW + 3000 + STEP, 3)).toThrow(/jumped ahead/);
    expect(answer(NOW + 4000, 4)).not.toThrow();
  });

  it('does not take an answer replayed, however often, nor a later one that arrives at the same moment here', () => {
    const answer = feed(new AsOfProgress());
    answer(NOW, 0)();
    const rogue = NOW + 1000 + STEP;
    for (const secondsHere of [1, 2, 3, 10]) expect(answer(rogue, secondsHere)).toThrow(/jumped ahead/);
    // A later asOf with no time passed here since the refused one.
    expect(answer(rogue + 500, 10)).toThrow(/jumped ahead/);
  });

  it('does not take an answer that runs ahead of the refused one by more than the time passed plus the allowance', () => {
    const answer = feed(new AsOfProgress());
    answer(NOW, 0)();
    expect(answer(NOW + 1000 + 60_000 + MAX_AS_OF_JUMP_MS, 1)).toThrow(/jumped ahead/);
    expect(answer(NOW + 2000 + 2 * (60_000 + MAX_AS_OF_JUMP_MS), 2)).toThrow(/jumped ahead/);
    // It is now the refused answer this one continues.
    expect(answer(NOW + 3000 + 2 * (60_000 + MAX_AS_OF_JUMP_MS), 3)).not.toThrow();
  });

  it("still holds a confirming answer against this machine's clock plus five minutes", () => {
    const answer = feed(new AsOfProgress());
    answer(NOW, 0)();
    // 294 s ahead at 1 s here: within five minutes of this clock, but a jump against the feed.
    expect(answer(NOW + 294_000, 1)).toThrow(/jumped ahead/);
    // Continues it (26 s on in 1 s), but is 320 s ahead at 2 s here.
    expect(answer(NOW + 320_000, 2)).toThrow(/later than .*allowed clock skew/);
    expect(answer(NOW + 301_000, 3)).not.toThrow();
  });

  it('keeps the schema feed and each table’s records feed apart', () => {
    const progress = new AsOfProgress();
    const schema = feed(progress);
    const items = feed(progress, recordsFeed('items'));
    const orders = feed(progress, recordsFeed('orders'));
    for (const answer of [schema, items, orders]) answer(NOW, 0)();
    expect(schema(NOW + 1000 + STEP, 1)).toThrow(/jumped ahead/);
    // Another feed's refused answer confirms nothing here, nor does one feed's step pass for another.
    expect(items(NOW + 2000 + STEP, 2)).toThrow(/jumped ahead/);
    expect(orders(NOW + 3000 + STEP, 3)).toThrow(/jumped ahead/);
    expect(items(NOW + 4000 + STEP, 4)).not.toThrow();
    expect(orders(NOW + 5000 + STEP, 5)).not.toThrow();
    expect(schema(NOW + 6000 + STEP, 6)).not.toThrow();
  });
});
