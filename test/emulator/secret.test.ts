import { describe, expect, it } from 'vitest';
import { Secret } from '../../src/emulator/http/secret.ts';

/** Median time of `runs` rounds of `rounds` calls, in ns per call. */
function medianNs(fn: () => void, rounds = 200, runs = 31): number {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) fn();
    times.push(Number(process.hrtime.bigint() - start) / rounds);
  }
  return times.sort((a, b) => a - b)[Math.floor(runs / 2)]!;
}

describe('bearer secrets', () => {
  it('match only the exact secret', () => {
    const secret = new Secret('admin-token');
    expect(secret.matches('admin-token')).toBe(true);
    for (const guess of ['', 'admin', 'admin-token ', 'Admin-token', 'admin-tokem', 'admin-token-and-more']) {
      expect(secret.matches(guess), guess).toBe(false);
    }
  });

  it('take as long for a guess wrong at its first character as for one wrong at its last', () => {
    // As long as the emulator accepts in a header (16 KiB), where a plain comparison differs most.
    const value = 'k'.repeat(16 * 1024);
    const secret = new Secret(value);
    const wrongFirst = `x${value.slice(1)}`;
    const wrongLast = `${value.slice(0, -1)}x`;
    secret.matches(wrongFirst);
    secret.matches(wrongLast);
    // Interleaved, so a burst of load on the machine hits both alike; measured again (up to three
    // times) when a burst still skews one measurement. A comparison that stops at the first
    // difference is off by far more than 2x in every measurement.
    const measure = () => {
      const ratios: number[] = [];
      for (let i = 0; i < 5; i++) {
        ratios.push(medianNs(() => secret.matches(wrongLast)) / medianNs(() => secret.matches(wrongFirst)));
      }
      return ratios.sort((a, b) => a - b)[2]!;
    };
    const measured: number[] = [];
    for (let attempt = 0; attempt < 3; attempt++) {
      const ratio = measure();
      measured.push(ratio);
      if (ratio > 0.5 && ratio < 2) break;
    }
    const ratio = measured.at(-1)!;
    expect(ratio, `wrong-last / wrong-first time, each measurement: ${measured.join(', ')}`).toBeGreaterThan(0.5);
    expect(ratio, `wrong-last / wrong-first time, each measurement: ${measured.join(', ')}`).toBeLessThan(2);
  });
});
