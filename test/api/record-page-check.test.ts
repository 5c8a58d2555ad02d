import fc from 'fast-check';
import { expect, it } from 'vitest';
import { endpoints } from '../../src/api/endpoints.ts';
import { describeIssues } from '../../src/api/issues.ts';
import { recordListResponseCheck } from '../../src/api/record-page-check.ts';
import { recordListResponseSchema } from '../../src/api/records.ts';

/** The client checks record list pages in place (record-page-check.ts); it must agree with the schema. */
const anyJson = fc.jsonValue({ maxDepth: 2 });
const record = fc.oneof(
  { weight: 6, arbitrary: fc.record({ id: fc.oneof(fc.nat().map(String), fc.constant('12a'), fc.constant(''), fc.nat()), values: fc.oneof(fc.dictionary(fc.string(), anyJson), anyJson) }) },
  { weight: 1, arbitrary: fc.record({ id: fc.nat().map(String) }) },
  { weight: 1, arbitrary: anyJson },
);
const pageInfo = fc.oneof(
  { weight: 6, arbitrary: fc.record({ has_more: fc.boolean(), limit: fc.nat(), offset: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ has_more: anyJson, limit: anyJson, offset: anyJson }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: anyJson },
);
const page = fc.oneof(
  { weight: 8, arbitrary: fc.record({ data: fc.array(record, { maxLength: 4 }), page_info: pageInfo }) },
  { weight: 1, arbitrary: fc.record({ data: anyJson, page_info: pageInfo }, { requiredKeys: [] }) },
  { weight: 1, arbitrary: anyJson },
);

it('accepts exactly the pages the schema accepts, naming the same places at fault', () => {
  fc.assert(fc.property(page, (body) => {
    const fast = recordListResponseCheck.safeParse(body);
    const schema = recordListResponseSchema.safeParse(body);
    expect(fast.success).toBe(schema.success);
    if (fast.success && schema.success) {
      // The page itself (nothing copied), holding what the schema's output holds.
      expect(fast.data).toBe(body);
      expect(fast.data).toMatchObject(schema.data);
    } else if (!fast.success && !schema.success) {
      const places = (issues: readonly { path: PropertyKey[] }[]) => [...new Set(issues.map((i) => i.path.join('.')))].sort();
      expect(places(fast.error.issues)).toEqual(places(schema.error.issues));
      expect(describeIssues(fast.error.issues, 'response')).toMatch(/^response/);
    }
  }), { numRuns: 3000 });
});

it('is the check clients use for the records list', () => {
  expect(endpoints.listRecords.check).toBe(recordListResponseCheck);
});
