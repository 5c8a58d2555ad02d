import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunkByPayload } from '../../../src/sync/push/payload-chunks.ts';

/** The bytes of the request body that carries `items`. */
const bodyBytes = (items: readonly unknown[]) => Buffer.byteLength(JSON.stringify({ records: items }));

describe('chunkByPayload', () => {
  it('fills each batch in order as full as the byte and count limits allow, an oversized item alone', () => {
    const item = fc.record({ id: fc.nat(), name: fc.string({ maxLength: 60, unit: 'binary' }) });
    fc.assert(fc.property(fc.array(item, { maxLength: 120 }), fc.integer({ min: 1, max: 30 }), fc.integer({ min: 30, max: 2_000 }), (items, maxItems, maxBytes) => {
      const chunks = chunkByPayload(items, { maxBytes, maxItems });
      expect(chunks.flat()).toEqual(items);
      chunks.forEach((chunk, i) => {
        expect(chunk.length).toBeGreaterThan(0);
        expect(chunk.length).toBeLessThanOrEqual(maxItems);
        if (chunk.length > 1) expect(bodyBytes(chunk)).toBeLessThanOrEqual(maxBytes);
        const next = chunks[i + 1];
        // Full: the next item would have broken a limit.
        if (next) expect(chunk.length === maxItems || bodyBytes([...chunk, next[0]]) > maxBytes).toBe(true);
      });
    }), { numRuns: 300 });
  });
});
