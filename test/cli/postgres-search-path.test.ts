import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { dropRoles, pgUrlAs } from '../helpers/test-roles.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

const SLOT = '[2026-01-31T09:00:00.000Z,2026-01-31T09:15:00.000Z)';

/**
 * Functions planted where a role's search path finds them before pg_catalog's own: a role with
 * CREATE on `public` (every role before PostgreSQL 15, and after an upgrade of such a database)
 * can write one that is a closer match for a call than the built-in one (pg_catalog has only
 * `pg_advisory_xact_lock(bigint)`, and `lower(anyrange)` is polymorphic). Whoever runs such a
 * call runs the planted function with their own rights. Here the trap is a schema of the test's
 * own, first in the search path of a role of the test's own (`ALTER ROLE … SET search_path`), so
 * no other suite on the server meets it; every call of a planted function leaves a row in `hits`.
 */
describe('Postgres: functions planted on the search path are never called (real processes)', () => {
  const suffix = randomBytes(5).toString('hex');
  const role = `wsm_sp_${suffix}`;
  const schema = `wsm_sp_${suffix}`;
  const trap = `wsm_trap_${suffix}`;
  const t = (name: string) => `${quoteId(trap)}.${quoteId(name)}`;
  const q = (name: string) => `${quoteId(schema)}.${quoteId(name)}`;
  let admin: pg.Client;
  let emu: RunningEmulator;
  let roleUrl: string;
  /** Functions a view of the mirror calls that live outside pg_catalog and the mirror's schema. */
  const boundElsewhere = async (view: string) => (await admin.query<{ fn: string }>(`SELECT d.refobjid::regprocedure::text AS fn FROM pg_depend d
    JOIN pg_rewrite r ON r.oid = d.objid AND d.classid = 'pg_rewrite'::regclass
    JOIN pg_proc p ON p.oid = d.refobjid AND d.refclassid = 'pg_proc'::regclass
    WHERE r.ev_class = $1::regclass AND p.pronamespace NOT IN ('pg_catalog'::regnamespace, $2::regnamespace)`, [q(view), quoteId(schema)])).rows;
  const hits = async () => (await admin.query<{ fn: string; by: string }>(`SELECT fn, by FROM ${t('hits')} ORDER BY at`)).rows;

  beforeAll(async () => {
    if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
    admin = new pg.Client({ connectionString: testPgUrl });
    await admin.connect();
    await admin.query(`CREATE ROLE ${quoteId(role)} LOGIN`);
    await admin.query(`CREATE SCHEMA ${quoteId(schema)} AUTHORIZATION ${quoteId(role)}`);
    await admin.query(`CREATE SCHEMA ${quoteId(trap)}`);
    await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(trap)} TO PUBLIC`);
    await admin.query(`CREATE TABLE ${t('hits')} (fn text, by text DEFAULT current_user, at timestamptz DEFAULT clock_timestamp())`);
    await admin.query(`GRANT INSERT ON ${t('hits')} TO PUBLIC`);
    await admin.query(`CREATE FUNCTION ${t('pg_advisory_xact_lock')}(k integer) RETURNS void LANGUAGE plpgsql AS $f$
      BEGIN
        INSERT INTO ${t('hits')} (fn) VALUES ('pg_advisory_xact_lock');
        PERFORM pg_catalog.pg_advisory_xact_lock(k::bigint);
      END $f$`);
    for (const bound of ['lower', 'upper']) {
      await admin.query(`CREATE FUNCTION ${t(bound)}(r tstzrange) RETURNS timestamptz LANGUAGE plpgsql AS $f$
        BEGIN
          INSERT INTO ${t('hits')} (fn) VALUES ('${bound}');
          RETURN pg_catalog.${bound}(r);
        END $f$`);
    }
    // What `wsmirror check` asks of a mirror not made yet: current_database() is a name, and
    // pg_catalog's has_database_privilege takes text.
    await admin.query(`CREATE FUNCTION ${t('has_database_privilege')}(db name, privilege text) RETURNS boolean LANGUAGE plpgsql AS $f$
      BEGIN
        INSERT INTO ${t('hits')} (fn) VALUES ('has_database_privilege');
        RETURN pg_catalog.has_database_privilege(db::text, privilege);
      END $f$`);
    await admin.query(`ALTER ROLE ${quoteId(role)} SET search_path = ${quoteId(trap)}, public`);
    roleUrl = pgUrlAs(role);

    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('cal');
    await ws.createTable('cal', 'meetings', { hasHistory: true }, [field('title', 'string'), field('slot', 'appointment')]);
    await ws.createRecords('cal', 'meetings', [{ title: 'standup', slot: SLOT }]);
  });

  afterAll(async () => {
    await emu?.close();
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(trap)} CASCADE`);
      await dropRoles(admin, role);
      await admin.end();
    }
  });

  it('the daemon\'s sessions and the readable views it makes call pg_catalog\'s functions, whatever the role\'s search path', async () => {
    // The trap works: the role's own sessions find the planted functions.
    const own = new pg.Client({ connectionString: roleUrl });
    await own.connect();
    try {
      expect((await own.query<{ search_path: string }>('SHOW search_path')).rows[0]!.search_path).toBe(`${trap}, public`);
      await own.query('SELECT pg_advisory_xact_lock(hashtext(\'probe\'))');
    } finally {
      await own.end();
    }
    expect(await hits()).toEqual([{ fn: 'pg_advisory_xact_lock', by: role }]);
    await admin.query(`TRUNCATE ${t('hits')}`);

    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema });
    const check = await runWsmirror(['check'], env);
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toContain('the first sync creates it');
    const first = await runWsmirror(['sync'], env);
    expect(first.code, first.stderr).toBe(0);
    await admin.query(`UPDATE ${q('cal__meetings')} SET title = 'daily standup'`);
    const second = await runWsmirror(['sync'], env);
    expect(second.code, second.stderr).toBe(0);
    expect((await new UpstreamWorkspace(emu).allRecords('cal', 'meetings')).map((r) => r.values['title'])).toEqual(['daily standup']);
    // The catalog set-up of every open takes a transaction lock keyed by a hashtext (int4).
    expect(await hits()).toEqual([]);

    // A BI reader whose search path holds the trap too reads the appointment's bounds.
    await admin.query(`SET search_path = ${quoteId(trap)}, public`);
    try {
      const { rows } = await admin.query<{ s: Date; e: Date }>(`SELECT slot_start AS s, slot_end AS e FROM ${q('cal__meetings_v')}`);
      expect(rows.map((r) => [r.s.toISOString(), r.e.toISOString()])).toEqual([['2026-01-31T09:00:00.000Z', '2026-01-31T09:15:00.000Z']]);
      // Printed where `lower` would find the planted one, the view names pg_catalog's.
      const { rows: [view] } = await admin.query<{ def: string }>('SELECT pg_get_viewdef($1::regclass) AS def', [q('cal__meetings_v')]);
      expect(view!.def).toContain('pg_catalog.lower(');
      expect(view!.def).toContain('pg_catalog.upper(');
    } finally {
      await admin.query('RESET search_path');
    }
    expect(await boundElsewhere('cal__meetings_v')).toEqual([]);
    expect(await hits()).toEqual([]);
  }, 120_000);

  it('a readable view an older wsmirror bound to a planted function is bound again to pg_catalog\'s on upgrade; a view of one\'s own on it stays', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema });
    expect((await runWsmirror(['sync'], env)).code).toBe(0);
    // As an older wsmirror made it, in a session whose search path held the trap.
    const { rows: [plain] } = await admin.query<{ def: string }>('SELECT pg_get_viewdef($1::regclass) AS def', [q('cal__meetings_v')]);
    await admin.query(`SET search_path = ${quoteId(trap)}, public`);
    try {
      await admin.query(`CREATE OR REPLACE VIEW ${q('cal__meetings_v')} AS ${plain!.def.replace(/pg_catalog\./g, '')}`);
    } finally {
      await admin.query('RESET search_path');
    }
    expect((await boundElsewhere('cal__meetings_v')).map((r) => r.fn).sort()).toEqual([`${trap}.lower(tstzrange)`, `${trap}.upper(tstzrange)`]);
    await admin.query(`CREATE VIEW ${q('bi_meetings')} AS SELECT id, slot_start FROM ${q('cal__meetings_v')}`);
    await admin.query(`UPDATE ${q('_wsmirror_meta')} SET value = '11' WHERE key = 'capture_version'`);
    await admin.query(`TRUNCATE ${t('hits')}`);
    const check = await runWsmirror(['check'], env);
    expect(check.code, check.stdout).toBe(0);
    expect(check.stdout).toContain('note the next sync upgrades the capture set-up (version 11 to');

    const upgraded = await runWsmirror(['sync'], env);
    expect(upgraded.code, upgraded.stderr).toBe(0);
    expect(await boundElsewhere('cal__meetings_v')).toEqual([]);
    const { rows } = await admin.query<{ s: Date }>(`SELECT slot_start AS s FROM ${q('bi_meetings')}`);
    expect(rows.map((r) => r.s.toISOString())).toEqual(['2026-01-31T09:00:00.000Z']);
    expect(await hits()).toEqual([]);
  }, 120_000);
});
