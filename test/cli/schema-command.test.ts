import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runWsmirror } from '../helpers/processes.ts';

/** `wsmirror schema` as a real process, on the mirror `wsmirror demo` makes. */

/** The lines of one `## name` or `### name` section of the Markdown, up to the next heading. */
function section(markdown: string, name: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l === `## ${name}` || l === `### ${name}`);
  if (start < 0) throw new Error(`no section ${name} in:\n${markdown}`);
  const end = lines.findIndex((l, i) => i > start && l.startsWith('#'));
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

describe('wsmirror schema (real process)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-schema-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists every table, view and column of the demo mirror, and draws its references with --erd', async () => {
    const demo = await runWsmirror(['demo'], {}, { cwd: dir });
    expect(demo.code, demo.stderr).toBe(0);
    expect(demo.stdout).toContain("WSMIRROR_MIRROR_URL=sqlite:./wsmirror-demo.db ");
    expect(demo.stdout).toMatch(/ schema$/m);

    const env = { WSMIRROR_MIRROR_URL: `sqlite:${join(dir, 'wsmirror-demo.db')}` };
    const res = await runWsmirror(['schema'], env, { cwd: dir });
    expect(res.code, res.stderr).toBe(0);
    const md = res.stdout;
    expect(md.startsWith('# Data dictionary\n')).toBe(true);

    const db = new Database(join(dir, 'wsmirror-demo.db'), { readonly: true });
    try {
      const relations = db.prepare(`SELECT "sql_name", "view_name" FROM "_wsmirror_tables" ORDER BY "sql_name"`).all() as { sql_name: string; view_name: string }[];
      expect(relations.map((r) => r.sql_name)).toEqual(['crm__companies', 'crm__contacts', 'ops__meetings', 'ops__settings']);
      for (const { sql_name, view_name } of relations) {
        for (const name of [sql_name, view_name]) {
          const text = section(md, name);
          const columns = db.prepare(`SELECT "name", "type" FROM pragma_table_info(?)`).all(name) as { name: string; type: string }[];
          expect(columns.length).toBeGreaterThan(2);
          for (const c of columns) expect(text, `${name}.${c.name}`).toContain(`| \`${c.name}\` |`);
        }
      }
    } finally {
      db.close();
    }
    // Labels, types and references are there too.
    expect(section(md, 'crm__contacts')).toMatch(/\| `company` \| INTEGER \| company \(reference\) \| Company \| `crm__companies.id` \|/);
    expect(section(md, 'crm__contacts_v')).toMatch(/\| `company_label` \| TEXT \| company \| Company \(name of crm__companies\) \| `crm__companies.name` \|/);

    const erd = await runWsmirror(['schema', '--erd'], env, { cwd: dir });
    expect(erd.code, erd.stderr).toBe(0);
    expect(erd.stdout.startsWith('erDiagram\n')).toBe(true);
    expect(erd.stdout).toContain('  crm__companies |o--o{ crm__contacts : "company"');
    expect(erd.stdout).toMatch(/^ {4}INTEGER company FK "Company"$/m);
  }, 120_000);

  it('refuses a mirror that does not exist, creating nothing', async () => {
    const res = await runWsmirror(['schema'], { WSMIRROR_MIRROR_URL: `sqlite:${join(dir, 'missing.db')}` }, { cwd: dir });
    expect(res.code).toBe(78);
    expect(res.stderr).toContain('missing.db');
  });
});
