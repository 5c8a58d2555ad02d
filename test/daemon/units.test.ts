import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSchedule } from '../../src/daemon/schedule.ts';
import { formatCount, formatDuration, formatSize, parseDuration, parseSize } from '../../src/daemon/units.ts';

describe('durations', () => {
  it('reads units, combinations and bare seconds', () => {
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('10s')).toBe(10_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('1d')).toBe(86_400_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1h 30m')).toBe(5_400_000);
    expect(parseDuration('1.5s')).toBe(1_500);
    expect(parseDuration('30')).toBe(30_000);
    expect(parseDuration(30)).toBe(30_000);
    expect(parseDuration('10S')).toBe(10_000);
  });

  it('rejects what is not a duration', () => {
    for (const bad of ['ten', '', '10 seconds', '-5s', 's', '1w', '5ms5', null, true, [], {}, -1, Number.NaN]) {
      expect(parseDuration(bad), String(bad)).toBeUndefined();
    }
  });

  it('renders for humans', () => {
    expect(formatDuration(-5)).toBe('0ms'); // a clock running behind
    expect(formatDuration(850)).toBe('850ms');
    expect(formatDuration(59_600)).toBe('1m 00s'); // rounded to the second
    expect(formatDuration(42_000)).toBe('42s');
    expect(formatDuration(185_000)).toBe('3m 05s');
    expect(formatDuration(7_800_000)).toBe('2h 10m');
    expect(formatDuration(100 * 3_600_000)).toBe('4d 4h');
  });
});

describe('sizes', () => {
  it('reads binary multiples and bare bytes', () => {
    expect(parseSize('64MB')).toBe(64 * 1024 ** 2);
    expect(parseSize('64 MiB')).toBe(64 * 1024 ** 2);
    expect(parseSize('512kb')).toBe(512 * 1024);
    expect(parseSize('1GB')).toBe(1024 ** 3);
    expect(parseSize('2048')).toBe(2048);
    expect(parseSize(2048)).toBe(2048);
    for (const bad of ['big', '64XB', '-1MB', 1.5, null]) expect(parseSize(bad), String(bad)).toBeUndefined();
    expect(formatSize(64 * 1024 ** 2)).toBe('64MB');
    expect(formatSize(1536)).toBe('1.5KB');
  });
});

describe('schedules', () => {
  it('tells intervals from cron expressions', () => {
    expect(parseSchedule('30s')).toEqual({ schedule: { kind: 'interval', everyMs: 30_000 } });
    expect(parseSchedule(45)).toEqual({ schedule: { kind: 'interval', everyMs: 45_000 } });
    expect(parseSchedule(' */5  * * * * ')).toEqual({ schedule: { kind: 'cron', expression: '*/5 * * * *' } });
    expect(parseSchedule('@hourly')).toEqual({ schedule: { kind: 'cron', expression: '@hourly' } });
    expect(parseSchedule('0s')).toHaveProperty('error');
    expect(parseSchedule('@reboot')).toHaveProperty('error');
  });
});

describe('formatCount', () => {
  it('writes what toLocaleString("en-US") writes for the number rounded', () => {
    fc.assert(fc.property(fc.oneof(fc.integer({ min: -1e15, max: 1e15 }), fc.double({ min: -1e12, max: 1e12, noNaN: true })), (n) => {
      expect(formatCount(n)).toBe((Math.round(n) || 0).toLocaleString('en-US')); // and -0 as 0
    }), { numRuns: 2000 });
  });
});
