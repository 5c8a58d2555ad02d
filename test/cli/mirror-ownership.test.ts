import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachDialect, quoteId, type TestMirror } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror, type MirrorLocation } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A mirror belongs to one workspace: `wsmirror sync` pointed at a mirror of another workspace is
 * refused with exit 78 and changes nothing (it would drop every table the other one lacks).
 */
forEachDialect('a mirror belongs to one workspace', (dialect) => {
  let first: RunningEmulator;
  let second: RunningEmulator;
  let tm: TestMirror;
  const schemas: string[] = [];
  beforeAll(async () => {
    first = await startEmulator({ workspaceId: 'frst00000001' });
    second = await startEmulator({ workspaceId: 'scnd00000001' });
    for (const emu of [first, second]) {
      const upstream = new UpstreamWorkspace(emu);
      await upstream.createModule('crm');
      await upstream.createTable('crm', emu === first ? 'deals' : 'leads', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
      await upstream.createRecords('crm', emu === first ? 'deals' : 'leads', [{ title: 'one' }, { title: 'two' }]);
    }
    tm = await dialect.fresh();
  });
  afterAll(async () => {
    if (tm?.dialect === 'postgres') for (const schema of schemas) await tm.sql(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
    await first?.close();
    await second?.close();
  });

  /** Every table of the mirror location with all its rows, as text: equal means untouched. */
  async function snapshot(location: MirrorLocation): Promise<string> {
    if (tm.dialect === 'sqlite') {
      return createHash('sha256').update(readFileSync(location.url.slice('sqlite:'.length))).digest('hex');
    }
    const tables = await tm.sql<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [location.pgSchema],
    );
    const parts: string[] = [];
    for (const { table_name } of tables) {
      const [row] = await tm.sql<{ rows: string | null }>(
        `SELECT string_agg(t::text, '|' ORDER BY t::text) AS rows FROM ${quoteId(location.pgSchema!)}.${quoteId(table_name)} t`,
      );
      parts.push(`${table_name}: ${row?.rows ?? ''}`);
    }
    return parts.join('\n');
  }

  it('refuses a mirror of another workspace with exit 78, naming both, and leaves it untouched', async () => {
    const location: MirrorLocation = tm.dialect === 'sqlite'
      ? { url: `sqlite:${join(dirname(tm.url.slice('sqlite:'.length)), 'owned.db')}` }
      : { url: tm.url, pgSchema: `${tm.pgSchema}_owned` };
    if (location.pgSchema) schemas.push(location.pgSchema);
    const made = await runWsmirror(['sync'], daemonEnv(first, location));
    expect(made.code, made.stderr).toBe(0);
    const again = await runWsmirror(['sync'], daemonEnv(first, location));
    expect(again.code, again.stderr).toBe(0);

    const before = await snapshot(location);
    expect(before).not.toBe('');
    const refused = await runWsmirror(['sync'], daemonEnv(second, location));
    expect(refused.code, refused.stderr).toBe(78);
    expect(refused.stderr).toContain('holds workspace frst00000001, not scnd00000001');
    expect(await snapshot(location)).toBe(before);
  }, 30_000);
});
