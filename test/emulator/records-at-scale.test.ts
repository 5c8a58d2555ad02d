import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postCsv } from '../helpers/csv-upload.ts';
import { field } from '../helpers/schema.ts';
import { MODULE, startRecordsFixture, type RecordsFixture } from './record-fixtures.ts';

/**
 * Look-ups by value on a large table use the field's index: a unique check, or a CSV key, costs
 * the same on 60,000 records as a request that looks nothing up. Each case times the two kinds of
 * request interleaved and compares medians, so the machine's load weighs on both alike; a
 * look-up that reads every record of the table costs several times more.
 */

const RECORDS = 60_000;
const ROUNDS = 25;
/** A scan of the table costs far above this; an index look-up far below. */
const MAX_RATIO = 3;

let fx: RecordsFixture;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

beforeAll(async () => {
  fx = await startRecordsFixture();
  await fx.ws.createTable(MODULE, 'big', {}, [field('code', 'string', { unique: true }), field('note', 'string')]);
  await fx.ws.createTable(MODULE, 'small', {}, [field('code', 'string', { unique: true }), field('note', 'string')]);
  for (let start = 0; start < RECORDS; start += 2000) {
    const records = Array.from({ length: 2000 }, (_, i) => ({ code: `c${start + i}`, note: 'seed' }));
    const res = await fx.api('POST', fx.records('big'), { records });
    expect(res.status).toBe(201);
  }
}, 120_000);
afterAll(() => fx.emu.close());

async function timed(request: () => Promise<{ status: number }>, status: number): Promise<number> {
  const started = performance.now();
  const res = await request();
  expect(res.status).toBe(status);
  return performance.now() - started;
}

/** Median times of two requests run in turns. */
async function compare(withLookUp: (round: number) => Promise<{ status: number }>, without: (round: number) => Promise<{ status: number }>, status: number) {
  const a: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    a.push(await timed(() => withLookUp(round), status));
    b.push(await timed(() => without(round), status));
  }
  return { withLookUp: median(a), without: median(b) };
}

describe('look-ups by value on a large table', () => {
  it('checks a unique value through its index', async () => {
    // The same request into the large table and into an empty one.
    const create = (table: string, code: string) => fx.api('POST', fx.records(table), { records: [{ code }] });
    const t = await compare((i) => create('big', `new${i}`), (i) => create('small', `new${i}`), 201);
    expect(t.withLookUp / t.without, JSON.stringify(t)).toBeLessThan(MAX_RATIO);
  }, 60_000);

  it('finds the records of CSV keys through the key field\'s index', async () => {
    const rows = (round: number) => Array.from({ length: 50 }, (_, i) => `c${round * 50 + i},r${round}`).join('\n');
    const t = await compare(
      (i) => postCsv(fx.emu, MODULE, 'big', `code,note\n${rows(i)}\n`, {
        importMode: 'update', batchSize: '5',
        mappings: JSON.stringify([{ csvColumnName: 'code', fieldName: 'code', updatePolicy: 'key' }, { csvColumnName: 'note', fieldName: 'note' }]),
      }),
      (i) => postCsv(fx.emu, MODULE, 'big', `note\n${rows(i).replace(/^c\d+,/gm, '')}\n`, { batchSize: '5' }),
      200,
    );
    expect(t.withLookUp / t.without, JSON.stringify(t)).toBeLessThan(MAX_RATIO);
  }, 60_000);
});
