import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { dropRoles, pgUrlAs } from '../helpers/test-roles.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';
import { companiesAndNotes } from '../helpers/companies-and-notes.ts';

/**
 * A writer hangs a trigger of its own on one mirrored table (crm.notes, which references
 * crm.companies). The daemon never runs it, and that table alone is held back, as a table whose
 * SQL table is missing is: the other table's local edits go upstream (a create among them that
 * notes' rows reference), its records and its schema change come in (which rebuilds the capture
 * triggers and view of notes, referencing it), and notes is reported failed every cycle, naming
 * the trigger and the DROP TRIGGER to run; `wsmirror status` says so before a cycle has met it.
 * Once the trigger is dropped, notes catches up.
 */
interface SyncJson {
  push: { pushed?: number; failed?: number; error?: { message: string } };
  tables: { table: string; action: string; error?: { code: string; message: string } }[];
}
interface StatusJson {
  tables: { table: string; status: string; rows: number | null; error?: string }[];
  attention: string[];
}

describe('Postgres: a mirrored table carrying a trigger of another role (real processes)', () => {
  const suffix = randomBytes(5).toString('hex');
  const schema = `wsm_ftrig_${suffix}`;
  const writer = `wsm_ftrig_w_${suffix}`;
  const app = `wsm_ftrig_app_${suffix}`;
  let admin: pg.Client;
  let emu: RunningEmulator;
  let ws: UpstreamWorkspace;
  let env: Record<string, string>;
  let acme: number;
  let note: number;
  const table = (name: string) => `${quoteId(schema)}.${quoteId(name)}`;
  const fired = async () => Number((await admin.query(`SELECT count(*) AS n FROM ${quoteId(app)}.fired`)).rows[0].n);
  const columns = async (name: string) => (await admin.query<{ c: string }>(
    'SELECT column_name AS c FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position', [schema, name],
  )).rows.map((r) => r.c);
  const sync = async () => {
    const res = await runWsmirror(['sync', '--json'], env);
    // A cycle that throws prints no report: its error is on stderr.
    expect(res.stdout, res.stderr).not.toBe('');
    return { ...res, report: JSON.parse(res.stdout) as SyncJson };
  };

  beforeAll(async () => {
    if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
    admin = new pg.Client({ connectionString: testPgUrl });
    await admin.connect();
    emu = await startEmulator();
    ws = new UpstreamWorkspace(emu);
    ({ acme, note } = await companiesAndNotes(ws));
    env = daemonEnv(emu, { url: testPgUrl, pgSchema: schema }, { WSMIRROR_SYNC_LOOKBACK: '0s' });
    const first = await runWsmirror(['sync'], env);
    expect(first.code, first.stderr).toBe(0);

    // Local edits of both tables, made before the trigger is there: a company inserted here
    // that a note inserted here references (its create's settling rewrites that reference).
    await admin.query(`UPDATE ${table('crm__companies')} SET "name" = 'Acme 2' WHERE "id" = $1`, [acme]);
    const localCo = (await admin.query(`INSERT INTO ${table('crm__companies')} ("name") VALUES ('Local Co') RETURNING "id"`)).rows[0].id;
    await admin.query(`INSERT INTO ${table('crm__notes')} ("body", "company") VALUES ('about Local Co', $1)`, [localCo]);
    await admin.query(`UPDATE ${table('crm__notes')} SET "body" = 'edited here' WHERE "id" = $1`, [note]);

    // A writer allowed TRIGGER on notes hangs one of its own on it, on a function of its own.
    await admin.query(`CREATE ROLE ${quoteId(writer)} LOGIN`);
    await admin.query(`CREATE SCHEMA ${quoteId(app)} AUTHORIZATION ${quoteId(writer)}`);
    await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(schema)} TO ${quoteId(writer)}`);
    await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE, TRIGGER ON ${table('crm__notes')} TO ${quoteId(writer)}`);
    const editor = new pg.Client({ connectionString: pgUrlAs(writer) });
    await editor.connect();
    try {
      await editor.query(`CREATE TABLE ${quoteId(app)}.fired (by text)`);
      await editor.query(`GRANT INSERT ON ${quoteId(app)}.fired TO PUBLIC`);
      await editor.query(`CREATE FUNCTION ${quoteId(app)}.audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO ${quoteId(app)}.fired VALUES (current_user); RETURN NULL; END $$`);
      await editor.query(`CREATE TRIGGER zz_audit AFTER INSERT OR UPDATE OR DELETE ON ${table('crm__notes')}
        FOR EACH STATEMENT EXECUTE FUNCTION ${quoteId(app)}.audit()`);
    } finally {
      await editor.end();
    }

    // Upstream: a new record in each table, and a new field in each.
    await ws.createRecords('crm', 'companies', [{ name: 'Initech' }]);
    await ws.createRecords('crm', 'notes', [{ body: 'n2' }]);
    await ws.addFields('crm', 'companies', [{ name: 'city', type: 'string', labels: { '': 'City' } }]);
    await ws.addFields('crm', 'notes', [{ name: 'tag', type: 'string', labels: { '': 'Tag' } }]);
  });

  afterAll(async () => {
    await emu?.close();
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(app)} CASCADE`);
      await dropRoles(admin, writer);
      await admin.end();
    }
  });

  it('status says so before a cycle has met it', async () => {
    const res = await runWsmirror(['status', '--json'], mirrorEnv({ url: testPgUrl!, pgSchema: schema }));
    expect(res.code, res.stderr).toBe(1);
    const report = JSON.parse(res.stdout) as StatusJson;
    const notes = report.tables.find((x) => x.table === 'crm.notes')!;
    expect(notes.status).toBe('failing');
    expect(notes.error).toContain('zz_audit');
    expect(notes.rows).toBe(2);
    expect(report.tables.find((x) => x.table === 'crm.companies')!.status).toBe('ready');
    expect(report.attention.join('\n')).toContain(`DROP TRIGGER zz_audit ON ${schema}.crm__notes`);
  }, 60_000);

  it('holds back that table alone: the others push, pull and change schema; it is failed every cycle, naming the trigger', async () => {
    for (let cycle = 0; cycle < 2; cycle++) {
      const res = await sync();
      expect(res.code, res.stderr).toBe(1);
      expect(res.report.push.error, res.stderr).toBeUndefined();
      const byTable = Object.fromEntries(res.report.tables.map((x) => [x.table, x]));
      expect(byTable['crm.companies']!.action, JSON.stringify(byTable['crm.companies'])).not.toBe('failed');
      expect(byTable['crm.notes']!.action).toBe('failed');
      expect(byTable['crm.notes']!.error!.message).toContain(`carries trigger zz_audit (function ${app}.audit()`);
      expect(byTable['crm.notes']!.error!.message).toContain(`DROP TRIGGER zz_audit ON ${schema}.crm__notes`);
    }
    expect(await fired()).toBe(0);
    // The other table's edits went out, its new record and field came in.
    expect((await ws.allRecords('crm', 'companies')).map((r) => r.values['name'])).toEqual(['Acme 2', 'Globex', 'Initech', 'Local Co']);
    expect((await admin.query(`SELECT "name" FROM ${table('crm__companies')} ORDER BY "id"`)).rows.map((r) => r.name))
      .toEqual(['Acme 2', 'Globex', 'Initech', 'Local Co']);
    expect(await columns('crm__companies')).toContain('city');
    // Notes: nothing pulled, nothing pushed, its schema as it was.
    expect((await ws.allRecords('crm', 'notes')).map((r) => r.values['body'])).toEqual(['n1', 'n2']);
    expect((await admin.query(`SELECT "body" FROM ${table('crm__notes')} ORDER BY "body"`)).rows.map((r) => r.body))
      .toEqual(['about Local Co', 'edited here']);
    expect(await columns('crm__notes')).not.toContain('tag');

    const status = await runWsmirror(['status'], mirrorEnv({ url: testPgUrl!, pgSchema: schema }));
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/crm\.notes: .*carries trigger zz_audit/);
  }, 120_000);

  it('once the trigger is dropped, the table catches up: its edits go out, the reference to the company created meanwhile among them', async () => {
    await admin.query(`DROP TRIGGER zz_audit ON ${table('crm__notes')}`);
    const res = await sync();
    expect(res.code, res.stdout + res.stderr).toBe(0);
    expect(await columns('crm__notes')).toContain('tag');
    const localCo = (await ws.allRecords('crm', 'companies')).find((r) => r.values['name'] === 'Local Co')!.id;
    const upstream = (await ws.allRecords('crm', 'notes')).map((r) => [r.values['body'], r.values['company'] === null ? null : String(r.values['company'])]);
    expect(upstream).toEqual([['edited here', String(acme)], ['n2', null], ['about Local Co', String(localCo)]]);
    expect((await admin.query(`SELECT "body", "company" FROM ${table('crm__notes')} ORDER BY "id"`)).rows.map((r) => [r.body, r.company === null ? null : String(r.company)]))
      .toEqual([['edited here', String(acme)], ['n2', null], ['about Local Co', String(localCo)]]);
    expect(await fired()).toBe(0);
  }, 120_000);
});
