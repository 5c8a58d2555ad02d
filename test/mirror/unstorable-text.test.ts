import { expect, it } from 'vitest';
import { openMirror } from '../../src/mirror/open-mirror.ts';
import type { MirrorLogger } from '../../src/mirror/mirror-logger.ts';
import { planSchema } from '../../src/mirror/schema-planner.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

/**
 * NUL and lone UTF-16 surrogates cannot be stored in Postgres text or jsonb (and break most
 * SQLite tools): the mirror stores U+FFFD in their place, in both dialects, keeps every other
 * value and record, and logs each record and field that was changed once.
 */
const NUL = '\u0000';
const LONE_HIGH = '\ud800';
const LONE_LOW = '\udc00';
const R = '\ufffd';

const WS = workspace(
  module('m1', 'lab', [
    table('t1', 'notes', [
      field('fa', 'title', 'string', { labels: { '': `Title${NUL}`, fr: `Titre${LONE_HIGH}` } }),
      field('fb', 'tags', 'multi', {
        options: [{ id: 'o1', name: `red${NUL}`, order: 1, labels: { '': `Red${LONE_LOW}` } }],
      }),
      field('fc', 'data', 'any'),
      field('fd', 'plain', 'string'),
    ], { labels: { '': `Notes${NUL}` } }),
  ]),
);

function recordingLogger(): MirrorLogger & { warnings: object[] } {
  const warnings: object[] = [];
  return { warnings, debug() {}, info() {}, warn(obj: object) { warnings.push(obj); } };
}

forEachDialect('unstorable text (NUL, lone surrogates)', ({ fresh }) => {
  it('stores U+FFFD in their place in text and JSON values, keeps the rest of the table, logs record and field once', async () => {
    const t = await fresh();
    const logger = recordingLogger();
    const mirror = await openMirror(t.url, { pgSchema: t.pgSchema, logger });
    try {
      await sync(mirror, WS);
      await mirror.applyRows('t1', {
        upserts: [
          { id: 1, values: { title: 'clean', tags: ['a'], data: { k: 'v' }, plain: 'p1' } },
          {
            id: 2,
            values: {
              title: `a${NUL}b${LONE_HIGH}c${LONE_LOW}d\u{1F600}`,
              tags: [`x${NUL}`, `y${LONE_HIGH}`],
              data: { [`k${NUL}`]: [`v${LONE_LOW}`, 1, { deep: `z${NUL}` }], ok: 'fine' },
              plain: 'p2',
            },
          },
          { id: 3, values: { title: 'also clean', tags: null, data: null, plain: 'p3' } },
        ],
      });
      const rows = await t.sql<{ id: unknown; title: string; tags: unknown; data: unknown; plain: string }>(
        `SELECT id, title, tags, data, plain FROM ${t.table('lab__notes')} ORDER BY id`,
      );
      expect(rows.map((r) => Number(r.id))).toEqual([1, 2, 3]);
      const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
      expect(rows[1]!.title).toBe(`a${R}b${R}c${R}d\u{1F600}`);
      expect(json(rows[1]!.tags)).toEqual([`x${R}`, `y${R}`]);
      expect(json(rows[1]!.data)).toEqual({ [`k${R}`]: [`v${R}`, 1, { deep: `z${R}` }], ok: 'fine' });
      expect(rows[1]!.plain).toBe('p2');
      expect(rows[0]!.title).toBe('clean');

      const about2 = logger.warnings.filter((w) => (w as { record?: unknown }).record === 2);
      expect(about2.map((w) => (w as { field: string }).field).sort()).toEqual(['data', 'tags', 'title']);
      expect(logger.warnings.filter((w) => (w as { record?: unknown }).record !== 2)).toEqual([]);
      for (const w of about2) expect(w).toMatchObject({ table: 'lab__notes' });

      // Reading back gives what is stored.
      const [back] = await mirror.readRows('t1', [2]);
      expect(back!.values['title']).toBe(`a${R}b${R}c${R}d\u{1F600}`);
    } finally {
      await mirror.close();
    }
  });

  it('stores labels and option names with U+FFFD in the catalog, and plans nothing more next time', async () => {
    const t = await fresh();
    await sync(t.mirror, WS);
    const [tableRow] = await t.sql<{ label: string }>(`SELECT label FROM ${t.table('_wsmirror_tables')}`);
    expect(tableRow!.label).toBe(`Notes${R}`);
    const fields = await t.sql<{ field_name: string; label: string; labels: unknown }>(
      `SELECT field_name, label, labels FROM ${t.table('_wsmirror_fields')} ORDER BY position`,
    );
    const json = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
    expect(fields[0]).toMatchObject({ field_name: 'title', label: `Title${R}` });
    expect(json(fields[0]!.labels)).toEqual({ '': `Title${R}`, fr: `Titre${R}` });
    const [option] = await t.sql<{ name: string; label: string }>(`SELECT name, label FROM ${t.table('_wsmirror_choice_options')}`);
    expect(option).toEqual({ name: `red${R}`, label: `Red${R}` });
    expect(planSchema(await t.mirror.readCatalog(), WS).ops).toEqual([]);
  });
});
