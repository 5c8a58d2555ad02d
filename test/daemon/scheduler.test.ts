import { afterEach, describe, expect, it, vi } from 'vitest';
import { Scheduler } from '../../src/daemon/scheduler.ts';
import type { CycleOutcome, SchedulerOptions } from '../../src/daemon/scheduler.ts';

const schedulers: Scheduler[] = [];
afterEach(async () => {
  const stopped = Promise.all(schedulers.splice(0).map((s) => s.stop()));
  // A running cycle waits on the fake clock: move it on so the cycle can return.
  if (vi.isFakeTimers()) await vi.advanceTimersByTimeAsync(60_000);
  await stopped;
  vi.useRealTimers();
});

// The global setTimeout, so that under fake timers the cycles' own waits follow the fake clock.
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Exact times: a fake clock starting at `iso`, moved by the test. */
function fakeClock(iso = '2026-01-01T00:00:00.000Z'): void {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(new Date(iso));
}

interface Run {
  start: number;
  end: number;
}

/** A scheduler whose cycles take `cycleMs` and are recorded, with a running-at-once gauge. */
function recorded(options: Omit<SchedulerOptions, 'cycle'> & { cycleMs: number; fail?: (n: number) => boolean }) {
  const runs: Run[] = [];
  const outcomes: CycleOutcome[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const scheduler = new Scheduler({
    ...options,
    cycle: async () => {
      const run = { start: Date.now(), end: 0 };
      runs.push(run);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await sleep(options.cycleMs);
      inFlight--;
      run.end = Date.now();
      if (options.fail?.(runs.length)) throw new Error(`cycle ${runs.length} failed`);
    },
    onCycleEnd: (outcome) => {
      outcomes.push(outcome);
      options.onCycleEnd?.(outcome);
    },
  });
  schedulers.push(scheduler);
  return { scheduler, runs, outcomes, maxInFlight: () => maxInFlight };
}

/**
 * Waits for a condition by yielding to the event loop. `setImmediate` and `performance.now` are
 * not faked, so this works under the fake clock too (a faked `setTimeout` would never fire, and
 * a faked `Date` never moves).
 */
async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error('condition not met in time');
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

describe('scheduler, interval', () => {
  it('runs at once, then every interval measured from each start', async () => {
    fakeClock();
    const t0 = Date.now();
    // Cycles take 60 of the 100 ms: measured from each end, starts would be 160 ms apart.
    const { scheduler, runs } = recorded({ schedule: { kind: 'interval', everyMs: 100 }, cycleMs: 60 });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(380);
    // "At once" is a zero-delay timer: allow the clock's 1 ms for it.
    expect(runs).toHaveLength(4);
    expect(runs[0]!.start - t0).toBeLessThanOrEqual(1);
    expect(runs.slice(1).map((r, i) => r.start - runs[i]!.start)).toEqual([100, 100, 100]);
    expect(scheduler.nextRunAt!.getTime()).toBe(runs[3]!.start + 100);
  });

  it('waits one interval first when runOnStart is false', async () => {
    fakeClock();
    const t0 = Date.now();
    const { scheduler, runs } = recorded({ schedule: { kind: 'interval', everyMs: 150 }, cycleMs: 1, runOnStart: false });
    scheduler.start();
    expect(scheduler.nextRunAt!.getTime() - t0).toBe(150);
    await vi.advanceTimersByTimeAsync(149);
    expect(runs).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(runs.map((r) => r.start - t0)).toEqual([150]);
  });

  it('never overlaps: a slow cycle delays the next, which starts when it ends', async () => {
    fakeClock();
    const t0 = Date.now();
    const { scheduler, runs, maxInFlight } = recorded({ schedule: { kind: 'interval', everyMs: 20 }, cycleMs: 90 });
    scheduler.start();
    await vi.advanceTimersByTimeAsync(300);
    expect(maxInFlight()).toBe(1);
    // Missed ticks are not replayed: one start per finished cycle, right after it.
    expect(runs).toHaveLength(4);
    expect(runs[0]!.start - t0).toBeLessThanOrEqual(1);
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.start - runs[i - 1]!.end).toBeOneOf([0, 1]);
  });

  it('keeps the interval for real (real timers)', async () => {
    const { scheduler, runs, maxInFlight } = recorded({ schedule: { kind: 'interval', everyMs: 30 }, cycleMs: 5 });
    scheduler.start();
    await until(() => runs.length >= 3);
    await scheduler.stop();
    expect(maxInFlight()).toBe(1);
    for (let i = 1; i < runs.length; i++) expect(runs[i]!.start - runs[i - 1]!.start).toBeGreaterThanOrEqual(29);
  });

  it('records failures and keeps going', async () => {
    const { scheduler, outcomes } = recorded({
      schedule: { kind: 'interval', everyMs: 20 },
      cycleMs: 1,
      fail: (n) => n === 2,
    });
    scheduler.start();
    await until(() => outcomes.length >= 3);
    await scheduler.stop();
    expect(outcomes.slice(0, 3).map((o) => o.result)).toEqual(['success', 'failure', 'success']);
    expect((outcomes[1]!.error as Error).message).toBe('cycle 2 failed');
    expect(outcomes[0]!.durationMs).toBe(outcomes[0]!.finishedAt.getTime() - outcomes[0]!.startedAt.getTime());
    expect(scheduler.lastSuccess?.result).toBe('success');
    expect(scheduler.cycleCount).toBeGreaterThanOrEqual(3);
  });

  it('records the failed cycle as the last one, and the success before it', async () => {
    const { scheduler, outcomes } = recorded({ schedule: { kind: 'interval', everyMs: 10_000 }, cycleMs: 1, fail: () => true });
    scheduler.start();
    await until(() => outcomes.length === 1);
    expect(scheduler.lastOutcome?.result).toBe('failure');
    expect(scheduler.lastSuccess).toBeUndefined();
    expect(scheduler.nextRunAt).not.toBeNull();
  });
});

describe('scheduler, cron', () => {
  it('fires at the times of the expression', async () => {
    fakeClock('2026-01-01T00:00:00.300Z');
    const { scheduler, runs } = recorded({ schedule: { kind: 'cron', expression: '*/2 * * * * *' }, cycleMs: 100, runOnStart: false });
    scheduler.start();
    expect(scheduler.nextRunAt?.toISOString()).toBe('2026-01-01T00:00:02.000Z');
    await vi.advanceTimersByTimeAsync(6_000);
    expect(runs.map((r) => new Date(r.start).toISOString())).toEqual([
      '2026-01-01T00:00:02.000Z',
      '2026-01-01T00:00:04.000Z',
      '2026-01-01T00:00:06.000Z',
    ]);
  });

  it('skips the ticks a slow cycle covers, without overlapping', async () => {
    fakeClock('2026-01-01T00:00:00.300Z');
    const { scheduler, runs, maxInFlight } = recorded({ schedule: { kind: 'cron', expression: '* * * * * *' }, cycleMs: 1_300 });
    scheduler.start(); // the first cycle runs at once (0.300) and ends at 1.600: the 1 s tick is skipped
    await vi.advanceTimersByTimeAsync(4_000);
    expect(maxInFlight()).toBe(1);
    expect(runs.map((r) => new Date(r.start).toISOString().slice(17, 22))).toEqual(['00.30', '02.00', '04.00']);
    expect(runs.slice(1).map((r) => r.start % 1000)).toEqual([0, 0]);
  });

  it('fires on a real clock too, at whole seconds', async () => {
    const { scheduler, runs } = recorded({ schedule: { kind: 'cron', expression: '* * * * * *' }, cycleMs: 1, runOnStart: false });
    scheduler.start();
    expect(scheduler.nextRunAt!.getTime() % 1000).toBe(0);
    await until(() => runs.length >= 2, 5_000);
    await scheduler.stop();
    expect(runs[1]!.start - runs[0]!.start).toBeGreaterThanOrEqual(900);
  });
});

describe('scheduler, stop', () => {
  it('aborts the signal, waits for the running cycle to commit, then runs nothing more', async () => {
    const events: string[] = [];
    let aborted = false;
    const scheduler = new Scheduler({
      schedule: { kind: 'interval', everyMs: 20 },
      cycle: async (signal) => {
        events.push('begin');
        await sleep(50);
        // The open transaction commits before the cycle looks at the signal.
        events.push('commit');
        aborted = signal.aborted;
        if (signal.aborted) return;
        await sleep(10);
      },
    });
    schedulers.push(scheduler);
    scheduler.start();
    await until(() => events.length === 1);
    await scheduler.stop();
    events.push('stopped');
    expect(events).toEqual(['begin', 'commit', 'stopped']);
    expect(aborted).toBe(true);
    expect(scheduler.stopping).toBe(true);
    expect(scheduler.busy).toBe(false);
    expect(scheduler.nextRunAt).toBeNull();
    await sleep(60);
    expect(events).toEqual(['begin', 'commit', 'stopped']);
  });

  it('records a cycle that gave up on the signal as aborted, not failed', async () => {
    const outcomes: CycleOutcome[] = [];
    const scheduler = new Scheduler({
      schedule: { kind: 'interval', everyMs: 1_000 },
      cycle: (signal) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true })),
      onCycleEnd: (o) => outcomes.push(o),
    });
    scheduler.start();
    await sleep(10);
    await scheduler.stop();
    expect(outcomes.map((o) => o.result)).toEqual(['aborted']);
  });

  it('stops at once when idle, is idempotent, and starts only once', async () => {
    const { scheduler, runs } = recorded({ schedule: { kind: 'interval', everyMs: 10_000 }, cycleMs: 1, runOnStart: false });
    await scheduler.stop();
    const fresh = recorded({ schedule: { kind: 'interval', everyMs: 10_000 }, cycleMs: 1, runOnStart: false }).scheduler;
    fresh.start();
    expect(() => fresh.start()).toThrow(/already started/);
    const first = fresh.stop();
    expect(fresh.stop()).toBe(first);
    await first;
    expect(runs).toHaveLength(0);
  });
});
