import { afterAll, beforeAll, expect, it } from 'vitest';
import { dataDictionaryMarkdown, entityRelationshipDiagram } from '../../src/mirror/data-dictionary.ts';
import { mirrorDemoWorkspace } from '../helpers/demo-mirror.ts';
import { forEachDialect } from '../helpers/dialects.ts';
import type { TestMirror } from '../helpers/dialects.ts';
import type { RunningEmulator } from '../helpers/emulator.ts';

/** The relations of the mirror and their columns, as the database itself lists them. */
async function relations(t: TestMirror): Promise<Map<string, string[]>> {
  const rows = t.dialect === 'postgres'
    ? await t.sql<{ relation: string; column: string }>(
      `SELECT table_name AS relation, column_name AS column FROM information_schema.columns
       WHERE table_schema = $1 AND table_name NOT LIKE '\\_wsmirror\\_%' ORDER BY table_name, ordinal_position`, [t.pgSchema])
    : await t.sql<{ relation: string; column: string }>(
      `SELECT m.name AS relation, p.name AS column FROM sqlite_schema m, pragma_table_info(m.name) p
       WHERE m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\' AND m.name NOT LIKE '\\_wsmirror\\_%' ESCAPE '\\'
       ORDER BY m.name, p.cid`);
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.relation, [...(out.get(r.relation) ?? []), r.column]);
  return out;
}

forEachDialect('data dictionary', ({ fresh }) => {
  let emu: RunningEmulator;
  let t: TestMirror;
  beforeAll(async () => {
    ({ emu, t } = await mirrorDemoWorkspace(fresh));
  });
  afterAll(async () => {
    await emu?.close();
  });

  it('lists every table and view of the demo workspace with every column, in order', async () => {
    const md = dataDictionaryMarkdown(await t.mirror.readCatalog());
    const found = await relations(t);
    expect([...found.keys()].sort()).toEqual([
      'crm__companies', 'crm__companies_v', 'crm__contacts', 'crm__contacts_v',
      'ops__meetings', 'ops__meetings_v', 'ops__settings', 'ops__settings_v',
    ]);
    for (const [relation, columns] of found) {
      const section = md.split(/\n(?=#)/).find((s) => s.startsWith(`## ${relation}\n`) || s.startsWith(`### ${relation}\n`));
      expect(section, relation).toBeDefined();
      const listed = [...section!.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
      expect(listed, relation).toEqual(columns);
    }
  });

  it('draws every table and the reference between contacts and companies', async () => {
    const erd = entityRelationshipDiagram(await t.mirror.readCatalog());
    for (const name of ['crm__companies', 'crm__contacts', 'ops__meetings', 'ops__settings']) expect(erd).toContain(`  ${name} {`);
    expect(erd).toContain('  crm__companies |o--o{ crm__contacts : "company"');
  });
});

it('keeps upstream text as text in the Markdown: labels and ids cannot add lines, HTML or break out of code', () => {
  const hostile = 'Bad\n# heading | cell <img src=x onerror=alert(1)> `tick`';
  const markdown = dataDictionaryMarkdown({
    dialect: 'sqlite', revision: 1, foreignNames: [], unmigrated: [], missing: [], foreignTriggers: [], extraGrants: false,
    tables: [{
      tableId: 'id`) <b>x</b>', moduleId: 'm1', moduleName: 'crm', moduleLabel: null, tableName: 'deals', label: hostile, labels: {},
      sqlName: 'crm__deals', viewName: null, hasHistory: true, mode: 'history', state: 'ready', lastPullAt: null,
    } as never],
    fields: [{
      tableId: 'id`) <b>x</b>', fieldId: 'f1', fieldName: 'owner', fieldType: 'reference', label: hostile, labels: {},
      columnName: 'owner', sqlType: 'INTEGER', position: 0, readOnly: false, refTableId: 'gone`<i>', syncedFrom: null, options: null,
    }],
  });
  expect(markdown).not.toMatch(/^# heading/m);
  // Outside code spans (which show HTML as text), no tag is left to render.
  const prose = markdown.replace(/(`+)[^`][\s\S]*?\1/g, '');
  expect(prose).not.toMatch(/(^|[^\\])<(img|b|i)\b/);
  // Every code span closes where it opened: the ids stay inside theirs.
  for (const line of markdown.split('\n')) expect(line.replace(/(`+)[^`][\s\S]*?\1/g, ''), line).not.toContain('`');
});
