import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { CAPTURE_VERSION } from '../../src/mirror/operations/migrate-catalog.ts';
import { CATALOG_VERSION } from '../../src/mirror/catalog-tables.ts';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { daemonsOnPostgres } from '../helpers/postgres-daemon-suite.ts';
import { runWsmirror } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

const SLOT = '[2026-01-31T09:00:00.000Z,2026-01-31T09:15:00.000Z)';

/**
 * A Postgres mirror made by an older wsmirror, with views of a user's own on its readable views,
 * opened by this one (docs/operations.md, "Upgrading"; docs/mirror.md, "Objects of your own"):
 * real processes, the older mirror made by altering one this version synced.
 */
describe('Postgres: migrating a mirror that users built views on (real processes)', () => {
  const { fixture, mirrorOf } = daemonsOnPostgres('wsm_migrate', async (upstream) => {
    await upstream.createModule('crm');
    await upstream.createTable('crm', 'companies', { hasHistory: true }, [field('name', 'string')]);
    await upstream.createRecords('crm', 'companies', [{ name: 'Acme' }]);
    await upstream.createModule('cal');
    await upstream.createTable('cal', 'events', { hasHistory: true }, [field('title', 'string'), field('slot', 'appointment')]);
    await upstream.createRecords('cal', 'events', [{ title: 'standup', slot: SLOT }]);
  });
  const upstream = () => new UpstreamWorkspace(fixture.emu);
  const sql = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await fixture.admin.query(text, params)).rows as T[];
  const meta = async (schema: string, key: string) =>
    (await sql<{ value: string }>(`SELECT value FROM ${quoteId(schema)}._wsmirror_meta WHERE key = $1`, [key]))[0]?.value;
  /** A mirror synced once by this version. */
  async function synced() {
    const mirror = mirrorOf();
    const first = await runWsmirror(['sync'], mirror.env);
    expect(first.code, first.stderr).toBe(0);
    return { ...mirror, q: (name: string) => `${quoteId(mirror.schema)}.${quoteId(name)}` };
  }
  /** As an older capture set-up: no capture triggers, and an older version recorded. */
  async function olderCapture(schema: string, tables: readonly string[]) {
    for (const table of tables) {
      const triggers = await sql<{ name: string }>(
        `SELECT tgname AS name FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal`, [`${quoteId(schema)}.${quoteId(table)}`],
      );
      for (const { name } of triggers) await sql(`DROP TRIGGER ${quoteId(name)} ON ${quoteId(schema)}.${quoteId(table)}`);
    }
    await sql(`UPDATE ${quoteId(schema)}._wsmirror_meta SET value = $1 WHERE key = 'capture_version'`, [String(CAPTURE_VERSION - 1)]);
  }

  it('an older capture set-up is installed without touching the readable views: a view of one\'s own on one survives, and edits are pushed', async () => {
    const { schema, env, q } = await synced();
    await olderCapture(schema, ['crm__companies', 'cal__events']);
    await sql(`CREATE VIEW ${q('bi_companies')} AS SELECT id, name FROM ${q('crm__companies_v')}`);
    await sql(`UPDATE ${q('crm__companies')} SET name = 'not captured'`);

    const res = await runWsmirror(['sync'], env);
    expect(res.code, res.stderr).toBe(0);
    expect(await meta(schema, 'capture_version')).toBe(String(CAPTURE_VERSION));
    await sql(`UPDATE ${q('crm__companies')} SET name = 'Acme Corp'`);
    const again = await runWsmirror(['sync'], env);
    expect(again.code, again.stderr).toBe(0);
    expect((await upstream().allRecords('crm', 'companies')).map((r) => r.values['name'])).toEqual(['Acme Corp']);
    expect(await sql(`SELECT name FROM ${q('bi_companies')}`)).toEqual([{ name: 'Acme Corp' }]);
    await upstream().updateRecords('crm', 'companies', (await upstream().allRecords('crm', 'companies')).map((r) => ({ id: r.id, name: 'Acme' })));
  }, 60_000);

  it('an upgrade waits a bounded time for a table a long BI query reads, names that session, changes nothing, and applies once it ends', async () => {
    const { schema, env, q } = await synced();
    // An older capture set-up whose triggers are in place: replacing them (DROP TRIGGER) needs
    // each table's exclusive lock, which a dashboard's transaction left open on one of them holds.
    await sql(`UPDATE ${quoteId(schema)}._wsmirror_meta SET value = $1 WHERE key = 'capture_version'`, [String(CAPTURE_VERSION - 1)]);
    const bi = new pg.Client({ connectionString: testPgUrl, application_name: 'dashboard' });
    await bi.connect();
    try {
      await bi.query(`BEGIN; SELECT count(*) FROM ${q('crm__companies')}`);
      const started = Date.now();
      const blocked = await runWsmirror(['sync'], env, { killAfterMs: 40_000 });
      expect(blocked.signal, 'the upgrade waited for the lock without bound').toBeNull();
      expect(blocked.code, blocked.stderr).toBe(1);
      expect(Date.now() - started).toBeLessThan(30_000);
      const pid = (await bi.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      expect(blocked.stderr).toContain(`pid ${pid} (application "dashboard"`);
      expect(blocked.stderr).toContain(`pg_terminate_backend(${pid})`);
      expect(blocked.stderr).toMatch(/upgrading the mirror to this version of wsmirror: .*nothing was changed/);
      expect(await meta(schema, 'capture_version')).toBe(String(CAPTURE_VERSION - 1));
      // Other sessions were never queued behind the upgrade for long: the table reads at once.
      expect(await sql(`SELECT name FROM ${q('crm__companies')}`)).toEqual([{ name: 'Acme' }]);
    } finally {
      await bi.end();
    }
    const done = await runWsmirror(['sync'], env);
    expect(done.code, done.stderr).toBe(0);
    expect(await meta(schema, 'capture_version')).toBe(String(CAPTURE_VERSION));
  }, 90_000);

  it('a table whose column the migration converts, under a view of one\'s own, is held back alone until the view goes', async () => {
    const { schema, env, q } = await synced();
    // As layout 4 had it: the appointment column as text, its readable view selecting it.
    await olderCapture(schema, ['crm__companies', 'cal__events']);
    await sql(`DROP VIEW ${q('cal__events_v')}`);
    await sql(`ALTER TABLE ${q('cal__events')} ALTER COLUMN slot TYPE text USING $$${SLOT}$$`);
    await sql(`UPDATE ${quoteId(schema)}._wsmirror_fields SET sql_type = 'text' WHERE column_name = 'slot'`);
    await sql(`ALTER TABLE ${quoteId(schema)}._wsmirror_outbox DROP COLUMN retried_at`);
    await sql(`UPDATE ${quoteId(schema)}._wsmirror_meta SET value = '4' WHERE key = 'catalog_version'`);
    await sql(`CREATE FUNCTION ${q('_wsmirror_tstzrange')}(value text) RETURNS tstzrange LANGUAGE plpgsql STABLE STRICT AS $f$
      BEGIN RETURN value::tstzrange; EXCEPTION WHEN others THEN RETURN NULL; END $f$`);
    await sql(`CREATE VIEW ${q('cal__events_v')} AS SELECT id, title, slot, ${q('_wsmirror_tstzrange')}(slot) AS slot_range FROM ${q('cal__events')}`);
    await sql(`CREATE VIEW ${q('bi_events')} AS SELECT id, slot FROM ${q('cal__events_v')}`);
    const [companyId] = await upstream().createRecords('crm', 'companies', [{ name: 'Globex' }]);
    const [event] = await upstream().allRecords('cal', 'events');

    const held = await runWsmirror(['sync'], env);
    expect(held.code, held.stderr).toBe(1);
    expect(held.stderr).toMatch(/cal\.events: .*bi_events/);
    expect(await meta(schema, 'catalog_version')).toBe(String(CATALOG_VERSION));
    expect(await meta(schema, 'capture_version')).toBe(String(CAPTURE_VERSION));
    // The other table migrated and synced, both ways.
    expect(await sql(`SELECT name FROM ${q('crm__companies_v')} WHERE id = $1`, [companyId])).toEqual([{ name: 'Globex' }]);
    await sql(`UPDATE ${q('crm__companies')} SET name = 'Globex Inc' WHERE id = $1`, [companyId]);
    // The held table is left as it was, and neither pulled nor pushed.
    await sql(`UPDATE ${q('cal__events')} SET title = 'daily standup'`);
    await upstream().updateRecords('cal', 'events', [{ id: event!.id, slot: '[2026-02-01T09:00:00.000Z,2026-02-01T09:15:00.000Z)' }]);
    const still = await runWsmirror(['sync'], env);
    expect(still.code, still.stderr).toBe(1);
    expect((await upstream().allRecords('crm', 'companies')).map((r) => r.values['name'])).toContain('Globex Inc');
    expect((await upstream().allRecords('cal', 'events'))[0]!.values['title']).toBe('standup');
    expect(await sql(`SELECT slot FROM ${q('bi_events')}`)).toEqual([{ slot: SLOT }]);
    const status = await runWsmirror(['status', '--json'], env);
    const events = (JSON.parse(status.stdout) as { tables: { table: string; status: string; lastError: { code: string; message: string } | null }[] })
      .tables.find((t) => t.table === 'cal.events');
    expect(events).toMatchObject({ status: 'failing', lastError: { code: 'MIRROR', message: expect.stringContaining('bi_events') } });
    const check = await runWsmirror(['check'], env);
    expect(check.stdout).toContain('cal.events: held back');
    expect(check.stdout).not.toMatch(/retype column/);

    await sql(`DROP VIEW ${q('bi_events')}`);
    const done = await runWsmirror(['sync'], env);
    expect(done.code, done.stderr).toBe(0);
    const [type] = await sql<{ type: string }>(`SELECT pg_typeof(slot)::text AS type FROM ${q('cal__events')}`);
    expect(type!.type).toBe('tstzrange');
    expect((await upstream().allRecords('cal', 'events'))[0]!.values['title']).toBe('daily standup');
    expect(await sql(`SELECT title, lower(slot) AS start FROM ${q('cal__events_v')}`)).toEqual([
      { title: 'daily standup', start: new Date('2026-02-01T09:00:00.000Z') },
    ]);
    // The old views' function went with the last of them.
    expect(await sql(`SELECT 1 FROM pg_proc WHERE proname = '_wsmirror_tstzrange' AND pronamespace = $1::regnamespace`, [quoteId(schema)])).toEqual([]);
    const after = await runWsmirror(['status', '--json'], env);
    expect((JSON.parse(after.stdout) as { tables: { table: string; status: string }[] }).tables.map((t) => t.status)).toEqual(['ready', 'ready']);
  }, 90_000);
});
