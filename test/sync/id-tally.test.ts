import { describe, expect, it } from 'vitest';
import { IdTally } from '../../src/sync/id-tally.ts';

describe('IdTally', () => {
  it('counts each id once, in any order, merging ranges', () => {
    const tally = new IdTally();
    expect(tally.add([1, 2, 3, 5, 6])).toBe(5);
    expect(tally.add([3, 4, 6, 7])).toBe(2);
    expect(tally.add([100, 50, 4, 51, 49, 0])).toBe(5);
    expect(tally.add([0, 1, 2, 3, 4, 5, 6, 7, 49, 50, 51, 100])).toBe(0);
    expect(tally.size).toBe(12);
  });

  it('agrees with a Set on random ids', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % 5_000;
    const tally = new IdTally();
    const set = new Set<number>();
    for (let i = 0; i < 20_000; i++) {
      const id = random();
      expect(tally.add([id])).toBe(set.has(id) ? 0 : 1);
      set.add(id);
    }
    expect(tally.size).toBe(set.size);
  });
});
