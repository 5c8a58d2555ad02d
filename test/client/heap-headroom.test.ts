import { describe, expect, it } from 'vitest';
import { heapShortfall } from '../../src/client/heap-headroom.ts';

/** Which answers the client refuses before parsing them, for a heap of 166 MB (the service's 160 MB and 6 of new space). */
const SERVICE_HEAP = 166 * 1024 * 1024;

describe('an answer the heap could not hold is refused before it is parsed', () => {
  it('a page of long texts fits: its size is in its strings, not in many values', () => {
    const page = JSON.stringify({ data: Array.from({ length: 100 }, (_, i) => ({ id: String(i + 1), values: { body: 'x'.repeat(250_000) } })) });
    expect(page.length).toBeGreaterThan(25_000_000);
    expect(heapShortfall(Buffer.from(page), SERVICE_HEAP)).toBeUndefined();
  });

  it('a schema of 2,000 tables of 20 fields fits', () => {
    const tables = Array.from({ length: 2_000 }, (_, i) => ({ id: `tbl${i}`, name: `t${i}`, fields: Array.from({ length: 20 }, (_, j) => ({ id: `f${i}_${j}`, name: `f${j}`, type: 'string' })) }));
    expect(heapShortfall(Buffer.from(JSON.stringify({ data: { name: 'w', modules: [{ tables }] } })), SERVICE_HEAP)).toBeUndefined();
  });

  it('600,000 tables do not, and the shortfall says by how much', () => {
    const tables = Array.from({ length: 600_000 }, (_, i) => ({ id: `tbl${String(i).padStart(9, '0')}`, name: `t${i}`, hasHistory: true, fields: [] }));
    const body = Buffer.from(JSON.stringify({ data: { name: 'w', modules: [{ tables }] } }));
    const shortfall = heapShortfall(body, SERVICE_HEAP);
    expect(shortfall).toMatchObject({ bodyBytes: body.length, properties: 600_000 * 4 + 4, heapLimitBytes: SERVICE_HEAP });
    expect(shortfall!.neededBytes).toBeGreaterThan(SERVICE_HEAP);
  });
});
