import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachDialect, quoteId, type TestMirror } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror, type MirrorLocation } from '../helpers/processes.ts';
import { startRewritingProxy } from '../helpers/rewriting-proxy.ts';
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

/**
 * A mirror follows one upstream: its cursors count changes as the upstream it was synced from
 * made them, so the same workspace id at another address (a staging copy, the demo's own
 * emulator) is refused, naming both, until `wsmirror resync` of every table binds the mirror to
 * the new address. Before, such a sync went on from the old cursors and missed changes.
 */
forEachDialect('a mirror follows one upstream', (dialect) => {
  let first: RunningEmulator;
  let second: RunningEmulator;
  let tm: TestMirror;
  let location: MirrorLocation;
  beforeAll(async () => {
    first = await startEmulator({ workspaceId: 'same00000001' });
    second = await startEmulator({ workspaceId: 'same00000001' });
    for (const [emu, titles] of [[first, ['one', 'two']], [second, ['three']]] as const) {
      const upstream = new UpstreamWorkspace(emu);
      await upstream.createModule('crm');
      await upstream.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
      await upstream.createRecords('crm', 'deals', titles.map((title) => ({ title })));
    }
    // A field only the second copy has, made before the first sync: the first upstream's schema
    // cursor is later than its change.
    await new UpstreamWorkspace(second).addFields('crm', 'deals', [{ name: 'only_on_copy', type: 'string', labels: { '': 'Only on copy' } }]);
    tm = await dialect.fresh();
    location = tm.dialect === 'sqlite'
      ? { url: `sqlite:${join(dirname(tm.url.slice('sqlite:'.length)), 'followed.db')}` }
      : { url: tm.url, pgSchema: `${tm.pgSchema}_followed` };
  });
  afterAll(async () => {
    if (tm?.dialect === 'postgres') await tm.sql(`DROP SCHEMA IF EXISTS ${quoteId(location.pgSchema!)} CASCADE`);
    await first?.close();
    await second?.close();
  });

  const titles = async () => {
    const table = location.pgSchema ? `${quoteId(location.pgSchema)}.${quoteId('crm__deals')}` : quoteId('crm__deals');
    if (tm.dialect === 'postgres') return (await tm.sql<{ title: string }>(`SELECT title FROM ${table} ORDER BY title`)).map((r) => r.title);
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(location.url.slice('sqlite:'.length), { readonly: true });
    try {
      return (db.prepare(`SELECT title FROM ${table} ORDER BY title`).all() as { title: string }[]).map((r) => r.title);
    } finally {
      db.close();
    }
  };

  it('refuses another upstream address until a resync of every table, naming both', async () => {
    const made = await runWsmirror(['sync'], daemonEnv(first, location));
    expect(made.code, made.stderr).toBe(0);
    expect(await titles()).toEqual(['one', 'two']);

    const moved = `was synced from upstream ${first.url}, and upstream.baseUrl now names ${second.url}`;
    const refused = await runWsmirror(['sync'], daemonEnv(second, location));
    expect(refused.code, refused.stderr).toBe(78);
    expect(refused.stderr).toContain(moved);
    expect(refused.stderr).toContain('wsmirror resync');
    const check = await runWsmirror(['check'], daemonEnv(second, location));
    expect(check.code, check.stdout).toBe(78);
    expect(check.stdout).toMatch(/^FAIL mirror: .*was synced from upstream/m);
    // Some tables only: the others would keep cursors of the first upstream.
    const some = await runWsmirror(['resync', 'crm.deals'], daemonEnv(second, location));
    expect(some.code, some.stderr).toBe(78);
    expect(some.stderr).toContain(moved);
    expect(await titles()).toEqual(['one', 'two']);

    const all = await runWsmirror(['resync'], daemonEnv(second, location));
    expect(all.code, all.stderr).toBe(0);
    expect(await titles()).toEqual(['three']);
    const after = await runWsmirror(['sync'], daemonEnv(second, location));
    expect(after.code, after.stderr).toBe(0);
    const back = await runWsmirror(['sync'], daemonEnv(first, location));
    expect(back.code, back.stderr).toBe(78);
    expect(back.stderr).toContain(`was synced from upstream ${second.url}, and upstream.baseUrl now names ${first.url}`);

    // The same upstream at a new address (here a proxy): `sync --upstream-moved` follows it and
    // keeps the cursors, so the record added meanwhile comes as a change, not by a new backfill.
    const proxy = await startRewritingProxy(second.url);
    try {
      const viaProxy = { ...second, url: proxy.url };
      const notYet = await runWsmirror(['sync'], daemonEnv(viaProxy, location));
      expect(notYet.code, notYet.stderr).toBe(78);
      expect(notYet.stderr).toContain('wsmirror sync --upstream-moved');
      await new UpstreamWorkspace(second).createRecords('crm', 'deals', [{ title: 'four' }]);
      const followed = await runWsmirror(['sync', '--upstream-moved', '--json'], daemonEnv(viaProxy, location));
      expect(followed.code, followed.stderr).toBe(0);
      expect((JSON.parse(followed.stdout) as { tables: { action: string }[] }).tables.map((t) => t.action)).toEqual(['changes']);
      expect(await titles()).toEqual(['four', 'three']);
      const onward = await runWsmirror(['sync'], daemonEnv(viaProxy, location));
      expect(onward.code, onward.stderr).toBe(0);
      const direct = await runWsmirror(['sync'], daemonEnv(second, location));
      expect(direct.code, direct.stderr).toBe(78);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('a resync onto the other copy reads its whole schema, sends local inserts there and holds edits of the first copy\'s records', async () => {
    const moving: MirrorLocation = tm.dialect === 'sqlite'
      ? { url: `sqlite:${join(dirname(tm.url.slice('sqlite:'.length)), 'moving.db')}` }
      : { url: tm.url, pgSchema: `${tm.pgSchema}_moving` };
    // No lookback: the schema cursor alone decides whether the second copy's field is seen.
    const env = (emu: RunningEmulator) => daemonEnv(emu, moving, { WSMIRROR_SYNC_LOOKBACK: '0s' });
    const made = await runWsmirror(['sync'], env(first));
    expect(made.code, made.stderr).toBe(0);
    const deals = moving.pgSchema ? `${quoteId(moving.pgSchema)}.${quoteId('crm__deals')}` : quoteId('crm__deals');
    const outbox = moving.pgSchema ? `${quoteId(moving.pgSchema)}.${quoteId('_wsmirror_outbox')}` : quoteId('_wsmirror_outbox');
    const run = async (text: string) => {
      if (tm.dialect === 'postgres') return tm.sql(text);
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(moving.url.slice('sqlite:'.length));
      try {
        const stmt = db.prepare(text);
        return stmt.reader ? stmt.all() as Record<string, unknown>[] : (stmt.run(), []);
      } finally {
        db.close();
      }
    };
    await run(`UPDATE ${deals} SET title = 'one, edited here' WHERE title = 'one'`);
    await run(`INSERT INTO ${deals} (title) VALUES ('inserted here')`);

    const before = (await new UpstreamWorkspace(second).allRecords('crm', 'deals')).map((r) => r.values['title']);
    const resync = await runWsmirror(['resync'], env(second));
    expect(resync.code, resync.stderr).toBe(0);
    expect(resync.stdout + resync.stderr).toContain('1 pending edit(s) of records of the upstream it followed are held as failed');
    const columns = (await run(`SELECT * FROM ${deals}`)).flatMap((row) => Object.keys(row));
    expect(columns).toContain('only_on_copy');
    const entries = await run(`SELECT operation, status, last_error FROM ${outbox} ORDER BY entry_id`);
    expect(entries).toEqual([{ operation: 'update', status: 'failed', last_error: expect.stringContaining(`made to a record of upstream ${first.url}`) }]);
    const upstreamTitles = (await new UpstreamWorkspace(second).allRecords('crm', 'deals')).map((r) => r.values['title']).sort();
    expect(upstreamTitles).toEqual([...before, 'inserted here'].sort());
    if (moving.pgSchema) await tm.sql(`DROP SCHEMA IF EXISTS ${quoteId(moving.pgSchema)} CASCADE`);
  }, 60_000);
});
