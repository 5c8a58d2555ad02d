import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/daemon/logger.ts';
import { createProgress } from '../../src/daemon/progress.ts';

function fakeStream(tty: boolean) {
  const writes: string[] = [];
  return { writes, stream: { isTTY: tty, columns: 200, write: (chunk: string) => void writes.push(chunk) } };
}

afterEach(() => {
  vi.useRealTimers();
});

/** What the terminal shows, escape sequences taken out. */
function shown(writes: string[]): string {
  // eslint-disable-next-line no-control-regex
  return writes.join('').replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '');
}

describe('progress on a terminal', () => {
  it('draws a bar per task with rows, rate, share and ETA, and prints a summary when a task ends', () => {
    let now = 0;
    const { writes, stream } = fakeStream(true);
    const progress = createProgress({ label: 'backfill', stream, now: () => now });
    const orders = progress.task('crm.orders', 1000);
    now = 2_000;
    orders.add(200);
    progress.render();
    expect(shown(writes)).toContain('backfill crm.orders │ █████░░░░░░░░░░░░░░░░░░░  20% │ 200/1,000 rows │ 100 rows/s │ ETA 8s');

    const people = progress.task('crm.people');
    now = 4_000;
    orders.add(200);
    people.add(300);
    progress.render();
    // A task without a known total shows rows and rate only.
    expect(shown(writes)).toContain('backfill crm.people │ 300 rows │ 150 rows/s');
    people.setTotal(600);
    progress.render();
    expect(shown(writes)).toContain('backfill crm.people │ ████████████░░░░░░░░░░░░  50% │ 300/600 rows │ 150 rows/s │ ETA 2s');

    now = 5_000;
    people.add(300);
    writes.length = 0;
    people.done();
    expect(shown(writes)).toContain('backfill crm.people: 600 rows in 3s (200 rows/s)\n');
    orders.add(600);
    orders.done();
    expect(shown(writes)).toContain('backfill crm.orders: 1,000 rows in 5s (200 rows/s)\n');
    // The bars are gone and the cursor is back.
    expect(writes.join('')).toMatch(/\x1b\[\?25h/);
    progress.close();
  });

  it('follows the recent rate, not the average since the start', () => {
    let now = 0;
    const progress = createProgress({ label: 'backfill', stream: fakeStream(true).stream, now: () => now });
    const task = progress.task('crm.orders', 100_000);
    for (let s = 1; s <= 10; s++) {
      now = s * 1000;
      task.add(100);
    }
    for (let s = 11; s <= 30; s++) {
      now = s * 1000;
      task.add(10);
    }
    const [snapshot] = progress.snapshot();
    expect(snapshot!.done).toBe(1200);
    expect(snapshot!.rate).toBeGreaterThan(9);
    expect(snapshot!.rate).toBeLessThan(12);
    progress.close();
  });
});

describe('progress off a terminal', () => {
  it('logs a line per running task every interval, and one when a task ends', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    vi.setSystemTime(0);
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
    const { writes, stream } = fakeStream(false);
    const progress = createProgress({ label: 'backfill', stream, logger, logIntervalMs: 10_000 });
    const task = progress.task('crm.orders', 5_000);
    vi.advanceTimersByTime(5_000);
    task.add(1_000);
    expect(lines).toHaveLength(0);
    vi.advanceTimersByTime(5_000);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      msg: 'backfill crm.orders: 1,000/5,000 rows (20%), 100 rows/s, ETA 40s',
      progress: { work: 'backfill', task: 'crm.orders', done: 1000, total: 5000, perSecond: 100, etaSeconds: 40 },
    });
    vi.advanceTimersByTime(10_000);
    expect(lines).toHaveLength(2);
    task.add(4_000);
    task.done();
    expect(lines.at(-1)).toMatchObject({ msg: 'backfill crm.orders: 5,000 rows in 20s (250 rows/s)' });
    // Once nothing runs, the timer is gone: no more lines.
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(3);
    expect(writes).toEqual([]); // nothing went to the stream
  });

  it('writes plain lines to the stream when there is no logger', () => {
    let now = 0;
    const { writes, stream } = fakeStream(false);
    const progress = createProgress({ label: 'full scan', unit: 'records', stream, now: () => now });
    const task = progress.task('sales.items');
    now = 4_000;
    task.add(2_000);
    progress.render();
    expect(writes).toEqual(['full scan sales.items: 2,000 records, 500 records/s\n']);
    progress.close();
  });
});
