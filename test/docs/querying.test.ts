import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mirrorDemoWorkspace } from '../helpers/demo-mirror.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import type { TestMirror } from '../helpers/dialects.ts';
import type { RunningEmulator } from '../helpers/emulator.ts';

/**
 * Every query of docs/querying.md marked `<!-- tested: NAME DIALECTS -->` runs, as written, on a
 * mirror of the demo workspace (plus one meeting under way now), and gives the rows below.
 */
const DOC = readFileSync(join(import.meta.dirname, '../../docs/querying.md'), 'utf8');

interface DocQuery {
  name: string;
  dialects: string[];
  sql: string;
}

function docQueries(): DocQuery[] {
  return [...DOC.matchAll(/<!-- tested: (\S+) (\S+) -->\n```sql\n([\s\S]*?)```/g)].map((m) => ({
    name: m[1]!,
    dialects: m[2] === 'both' ? ['sqlite', 'postgres'] : [m[2]!],
    sql: m[3]!,
  }));
}

const TAGS = [
  { full_name: 'Ada Lovelace', tag: 'partner' },
  { full_name: 'Ada Lovelace', tag: 'vip' },
  { full_name: 'Grace Hopper', tag: 'newsletter' },
  // Created without tags: the field's default value upstream.
  { full_name: 'Jun Ito', tag: 'newsletter' },
];

/** Expected rows by query name; values as the separate connection returns them. */
const EXPECTED: Record<string, (dialect: string) => Record<string, unknown>[]> = {
  'count-by-label': (d) => [{ industry: 'Manufacturing', companies: count(d, 1) }, { industry: 'Retail', companies: count(d, 1) }],
  'count-by-label-catalog': (d) => [{ industry: 'Manufacturing', companies: count(d, 1) }, { industry: 'Retail', companies: count(d, 1) }],
  'join-reference': (d) => [{ company: 'Acme Robotics', contacts: count(d, 2) }, { company: 'Bluebird Books', contacts: count(d, 1) }],
  'reference-label': () => [
    { full_name: 'Ada Lovelace', company: 'Acme Robotics' },
    { full_name: 'Grace Hopper', company: 'Acme Robotics' },
    { full_name: 'Jun Ito', company: 'Bluebird Books' },
  ],
  'explode-multi': () => TAGS,
  'explode-multi-json': () => TAGS,
  'appointments-now': () => [{ title: 'Going on now' }],
  'appointments-table': () => [{ title: 'Going on now' }],
};

/** Postgres returns count(*) as a bigint string. */
function count(dialect: string, n: number): unknown {
  return dialect === 'postgres' ? String(n) : n;
}

forEachDialect('docs/querying.md', ({ dialect, fresh }) => {
  let emu: RunningEmulator;
  let t: TestMirror;
  beforeAll(async () => {
    const hour = 3_600_000;
    const slot = `[${new Date(Date.now() - hour).toISOString()},${new Date(Date.now() + hour).toISOString()})`;
    ({ emu, t } = await mirrorDemoWorkspace(fresh, (upstream) => upstream.createRecords('ops', 'meetings', [{ title: 'Going on now', slot }]).then(() => {})));
  });
  afterAll(async () => {
    await emu?.close();
  });

  const queries = docQueries().filter((q) => q.dialects.includes(dialect));
  it('has the queries of the page', () => {
    expect(queries.map((q) => q.name).sort()).toEqual(
      (dialect === 'postgres'
        ? ['appointments-now', 'appointments-table', 'count-by-label', 'count-by-label-catalog', 'explode-multi', 'explode-multi-json', 'join-reference', 'reference-label']
        : ['appointments-now', 'count-by-label', 'count-by-label-catalog', 'explode-multi', 'join-reference', 'reference-label']),
    );
  });
  for (const q of queries) {
    it(`runs ${q.name} as written`, async () => {
      const rows = await t.sql(q.sql);
      const expected = EXPECTED[q.name]!(dialect);
      // The appointment queries also return the bounds; only the title is checked exactly.
      const shown = q.name.startsWith('appointments-') ? rows.map((r) => ({ title: r['title'] })) : rows;
      expect(shown).toEqual(expected);
    });
  }
});
