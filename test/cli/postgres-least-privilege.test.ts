import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { dropRoles, pgUrlAs } from '../helpers/test-roles.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, mirrorEnv, runWsmirror, startWsmirror, stopProcess } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * The minimal Postgres grants of config/README.md: a role that owns its schema and has no CREATE
 * on the database (only the CONNECT and TEMPORARY every role has) runs every mirror command.
 */
describe('Postgres: a role that only owns its schema (real processes)', () => {
  const suffix = randomBytes(5).toString('hex');
  const role = `wsm_owner_${suffix}`;
  const schema = `wsm_priv_${suffix}`;
  const cwd = mkdtempSync(join(tmpdir(), 'wsmirror-priv-'));
  let admin: pg.Client;
  let emu: RunningEmulator;
  let roleUrl: string;

  beforeAll(async () => {
    if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
    admin = new pg.Client({ connectionString: testPgUrl });
    await admin.connect();
    const database = (await admin.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db;
    await admin.query(`CREATE ROLE ${quoteId(role)} LOGIN`);
    await admin.query(`CREATE SCHEMA ${quoteId(schema)} AUTHORIZATION ${quoteId(role)}`);
    await admin.query(`REVOKE CREATE ON DATABASE ${quoteId(database)} FROM ${quoteId(role)}`);
    const { rows } = await admin.query<{ can: boolean }>(`SELECT has_database_privilege($1, $2, 'CREATE') AS can`, [role, database]);
    expect(rows[0]!.can).toBe(false);
    roleUrl = pgUrlAs(role);

    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'deals', { hasHistory: true }, [
      { name: 'title', type: 'string', labels: { '': 'Title' } },
      { name: 'loud', type: 'function', labels: { '': 'Loud' }, expression: 'upper(title)' },
    ]);
    await ws.createTable('crm', 'notes', { hasHistory: false }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    await ws.createRecords('crm', 'deals', [{ title: 'a' }, { title: 'b' }]);
    await ws.createRecords('crm', 'notes', [{ body: 'x' }]);
  });

  afterAll(async () => {
    await emu?.close();
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await dropRoles(admin, role);
      await admin.end();
    }
    rmSync(cwd, { recursive: true, force: true });
  });

  it('runs sync (first and later runs), status and run', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema });
    const first = await runWsmirror(['sync'], env, { cwd });
    expect(first.code, first.stderr).toBe(0);
    const deals = await admin.query(`SELECT "title" FROM ${quoteId(schema)}."crm__deals" ORDER BY "id"`);
    expect(deals.rows.map((r: { title: string }) => r.title)).toEqual(['a', 'b']);
    const owner = await admin.query<{ owner: string }>(
      `SELECT tableowner AS owner FROM pg_tables WHERE schemaname = $1 AND tablename = 'crm__deals'`, [schema],
    );
    expect(owner.rows[0]!.owner).toBe(role);

    const again = await runWsmirror(['sync'], env, { cwd });
    expect(again.code, again.stderr).toBe(0);

    const status = await runWsmirror(['status'], mirrorEnv({ url: roleUrl, pgSchema: schema }), { cwd });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain('crm__deals');

    let child: ChildProcess | undefined;
    const startedAt = new Date().toISOString();
    const running = runWsmirror(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'info', WSMIRROR_SCHEDULE: '1s' }, {
      cwd,
      onSpawn: (_kill, c) => {
        child = c;
      },
      killAfterMs: 80_000,
    });
    // Wait for a finished cycle in the log, then ask it to stop.
    const deadline = Date.now() + 60_000;
    let stopped = false;
    while (!stopped && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      const { rows } = await admin.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${quoteId(schema)}."_wsmirror_tables" WHERE "last_pull_at" > $1`, [startedAt],
      );
      if (Number(rows[0]!.n) > 0 && child) {
        await stopProcess(child, 'SIGTERM');
        stopped = true;
      }
    }
    const run = await running;
    expect(stopped).toBe(true);
    expect(run.code, run.stderr).toBe(0);
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/permission denied/i);
  }, 120_000);

  it('a BI role that may edit one table edits it without any right on the outbox, which it can neither read nor forge', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema });
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    const writer = `wsm_writer_${suffix}`;
    await admin.query(`CREATE ROLE ${quoteId(writer)} LOGIN`);
    const editor = new pg.Client({ connectionString: pgUrlAs(writer) });
    try {
      const deals = `${quoteId(schema)}."crm__deals"`;
      await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(schema)} TO ${quoteId(writer)}`);
      await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${deals} TO ${quoteId(writer)}`);
      await editor.connect();
      await editor.query(`UPDATE ${deals} SET "title" = 'a, edited in a BI tool' WHERE "title" = 'a'`);
      await editor.query(`INSERT INTO ${deals} ("title") VALUES ('new from a BI tool')`);
      // Only the daemon writes the outbox: a forged entry would be pushed with its API key.
      await expect(editor.query(`INSERT INTO ${quoteId(schema)}."_wsmirror_outbox" ("table_id", "sql_table", "record_id", "operation") VALUES ('x', 'crm__notes', 1, 'delete')`))
        .rejects.toThrow(/permission denied/);
      // Nor through the capture functions, fired by a table of its own (they write the outbox as
      // the daemon): a delete and an update of crm.notes, which it has no right on.
      const fn = async (suffixOfFn: string) => (await admin.query<{ name: string }>(
        `SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname LIKE $2 LIMIT 1`,
        [schema, `%${suffixOfFn}`],
      )).rows[0]!.name;
      await editor.query('CREATE TEMP TABLE forged (id bigint, body text)');
      await expect(editor.query(`CREATE TRIGGER f AFTER DELETE ON forged REFERENCING OLD TABLE AS _wsmirror_old
        FOR EACH STATEMENT EXECUTE FUNCTION ${quoteId(schema)}.${quoteId(await fn('_delete'))}()`)).rejects.toThrow(/permission denied/);
      await expect(editor.query(`CREATE TRIGGER g AFTER UPDATE ON forged REFERENCING OLD TABLE AS _wsmirror_old NEW TABLE AS _wsmirror_new
        FOR EACH STATEMENT EXECUTE FUNCTION ${quoteId(schema)}.${quoteId(await fn('_update'))}()`)).rejects.toThrow(/permission denied/);
      expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
      expect((await new UpstreamWorkspace(emu).allRecords('crm', 'notes')).map((r) => r.values.body)).toEqual(['x']);
      const titles = (await new UpstreamWorkspace(emu).allRecords('crm', 'deals')).map((r) => r.values.title);
      expect(titles).toEqual(expect.arrayContaining(['a, edited in a BI tool', 'new from a BI tool']));
    } finally {
      await editor.end().catch(() => {});
      await dropRoles(admin, writer);
    }
  }, 120_000);
  it('capture functions a restore left executable by every role are made the owner\'s again; one another role owns is named by check and sync', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema }, { WSMIRROR_LOG_LEVEL: 'warn' });
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    const functions = async () => (await admin.query<{ name: string; owner: string; public: boolean }>(
      `SELECT p.proname AS name, pg_get_userbyid(p.proowner) AS owner, has_function_privilege('public', p.oid, 'EXECUTE') AS public
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname LIKE '\\_wsmirror\\_capture\\_%' ORDER BY 1`,
      [schema],
    )).rows;
    const before = await functions();
    expect(before.length).toBeGreaterThan(0);
    expect(before.every((f) => !f.public && f.owner === role)).toBe(true);

    // As a restore of pg_dump -x leaves them: executable by PUBLIC, the default of a new function.
    for (const f of before) await admin.query(`GRANT EXECUTE ON FUNCTION ${quoteId(schema)}.${quoteId(f.name)}() TO PUBLIC`);
    const sync = await runWsmirror(['sync'], env, { cwd });
    expect(sync.code, sync.stderr).toBe(0);
    expect((await functions()).filter((f) => f.public)).toEqual([]);
    expect(sync.stdout + sync.stderr).toContain(`PUBLIC could execute the capture functions of ${schema}.crm__deals, ${schema}.crm__notes, which write the outbox as ${role}`);

    // As a restore of pg_dump -O leaves them: owned by the role that restored (here a superuser).
    const insertFn = before.find((f) => f.name.endsWith('_insert'))!.name;
    const superuser = (await admin.query<{ u: string }>('SELECT current_user AS u')).rows[0]!.u;
    await admin.query(`ALTER FUNCTION ${quoteId(schema)}.${quoteId(insertFn)}() OWNER TO ${quoteId(superuser)}`);
    try {
      const fix = `ALTER FUNCTION ${quoteId(schema)}.${quoteId(insertFn)}() OWNER TO ${quoteId(role)}`;
      const check = await runWsmirror(['check'], env, { cwd });
      expect(check.code, check.stdout).toBe(78);
      expect(check.stdout).toContain(`capture function ${schema}.${insertFn} of ${schema}.crm__`);
      expect(check.stdout).toContain(`is owned by role ${superuser}, not by ${role}`);
      expect(check.stdout).toContain(fix);
      const again = await runWsmirror(['sync'], env, { cwd });
      expect(again.code, again.stderr).toBe(0);
      // A warning of the log (JSON lines: its quotes escaped).
      expect(again.stdout + again.stderr).toContain(JSON.stringify(fix).slice(1, -1));
    } finally {
      await admin.query(`ALTER FUNCTION ${quoteId(schema)}.${quoteId(insertFn)}() OWNER TO ${quoteId(role)}`);
    }
  }, 120_000);

  it('a writer that sets the daemon\'s marker (wsmirror.writer) is captured and refused read-only writes all the same', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema });
    const [gone] = await new UpstreamWorkspace(emu).createRecords('crm', 'deals', [{ title: 'to delete' }]);
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    const writer = `wsm_marker_${suffix}`;
    await admin.query(`CREATE ROLE ${quoteId(writer)} LOGIN`);
    const editor = new pg.Client({ connectionString: pgUrlAs(writer) });
    const deals = `${quoteId(schema)}."crm__deals"`;
    /** One transaction of the writer's, marked as the daemon marks its own. */
    const marked = async (statement: string) => {
      await editor.query('BEGIN');
      try {
        await editor.query(`SET LOCAL wsmirror.writer = 'daemon'`);
        const result = await editor.query(statement);
        await editor.query('COMMIT');
        return result;
      } catch (error) {
        await editor.query('ROLLBACK');
        throw error;
      }
    };
    try {
      await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(schema)} TO ${quoteId(writer)}`);
      await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE, TRUNCATE ON ${deals} TO ${quoteId(writer)}`);
      await editor.connect();
      await marked(`UPDATE ${deals} SET "title" = 'b, marked as the daemon' WHERE "title" = 'b'`);
      const inserted = await marked(`INSERT INTO ${deals} ("title") VALUES ('inserted, marked as the daemon') RETURNING "id"`);
      expect(Number(inserted.rows[0].id)).toBeLessThan(0);
      await marked(`DELETE FROM ${deals} WHERE "id" = ${gone}`);
      // The guards hold too: no id change, no write to a column computed upstream, no TRUNCATE.
      await expect(marked(`UPDATE ${deals} SET "id" = "id" + 1000 WHERE "title" = 'b, marked as the daemon'`)).rejects.toThrow(/id of a mirrored row cannot be changed/);
      await expect(marked(`UPDATE ${deals} SET "loud" = '"FORGED"'`)).rejects.toThrow(/column loud of crm__deals is read-only/);
      await expect(marked(`TRUNCATE ${deals}`)).rejects.toThrow(/TRUNCATE of crm__deals is not captured/);
      // The marker for the whole session changes nothing either.
      await editor.query(`SET wsmirror.writer = 'daemon'`);
      await expect(editor.query(`UPDATE ${deals} SET "loud" = '"FORGED"'`)).rejects.toThrow(/is read-only/);

      expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
      const titles = (await new UpstreamWorkspace(emu).allRecords('crm', 'deals')).map((r) => r.values.title);
      expect(titles).toEqual(expect.arrayContaining(['b, marked as the daemon', 'inserted, marked as the daemon']));
      expect(titles).not.toContain('b');
      expect(titles).not.toContain('to delete');
    } finally {
      await editor.end().catch(() => {});
      await dropRoles(admin, writer);
    }
  }, 120_000);

  it('a writer granted ALL (TRIGGER among it) cannot run code of its own as the daemon\'s role: its trigger holds back the table, nothing forged goes upstream', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema }, { WSMIRROR_LOG_LEVEL: 'warn' });
    const ws = new UpstreamWorkspace(emu);
    const [victim] = await ws.createRecords('crm', 'notes', [{ body: 'must stay upstream' }]);
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    const writer = `wsm_trig_${suffix}`;
    const app = `wsm_app_${suffix}`;
    await admin.query(`CREATE ROLE ${quoteId(writer)} LOGIN`);
    await admin.query(`CREATE SCHEMA ${quoteId(app)} AUTHORIZATION ${quoteId(writer)}`);
    const editor = new pg.Client({ connectionString: pgUrlAs(writer) });
    const deals = `${quoteId(schema)}."crm__deals"`;
    const outbox = `${quoteId(schema)}."_wsmirror_outbox"`;
    const forged = async () => Number((await admin.query(`SELECT count(*) AS n FROM ${outbox} WHERE "record_id" = $1`, [victim])).rows[0].n);
    const canTrigger = async (table: string) => (await admin.query<{ can: boolean }>(
      `SELECT has_table_privilege($1, $2, 'TRIGGER') AS can`, [writer, `${quoteId(schema)}.${quoteId(table)}`],
    )).rows[0]!.can;
    try {
      await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(schema)} TO ${quoteId(writer)}`);
      await admin.query(`GRANT ALL ON ${deals} TO ${quoteId(writer)}`);
      await admin.query(`GRANT ALL ON ${quoteId(schema)}."_wsmirror_tables" TO ${quoteId(writer)}`);
      await editor.connect();
      // A plain function of the writer's: as a trigger it runs as whoever writes the table.
      await editor.query(`CREATE FUNCTION ${quoteId(app)}.evil() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        INSERT INTO ${outbox} ("table_id", "sql_table", "record_id", "operation")
          SELECT "table_id", 'crm__notes', ${victim}, 'delete' FROM ${quoteId(schema)}."_wsmirror_tables" WHERE "sql_name" = 'crm__notes';
        RETURN NULL; END $$`);
      await editor.query(`CREATE TRIGGER zz_evil AFTER INSERT OR UPDATE OR DELETE ON ${deals} FOR EACH STATEMENT EXECUTE FUNCTION ${quoteId(app)}.evil()`);
      await ws.createRecords('crm', 'deals', [{ title: 'pulled past the trigger?' }]);

      const held = await runWsmirror(['sync'], env, { cwd });
      const said = held.stdout + held.stderr;
      expect(await forged()).toBe(0);
      expect(said).toContain('zz_evil');
      expect(said).toContain(`DROP TRIGGER zz_evil ON ${schema}.crm__deals`);
      // The open for writing took back what a writer never needs, naming the role.
      expect(said).toMatch(new RegExp(`${writer}.*TRIGGER.*revoked`));
      expect(await canTrigger('crm__deals')).toBe(false);
      expect(await canTrigger('_wsmirror_tables')).toBe(false);
      await expect(editor.query(`CREATE TRIGGER zz_again AFTER INSERT ON ${deals} FOR EACH STATEMENT EXECUTE FUNCTION ${quoteId(app)}.evil()`))
        .rejects.toThrow(/permission denied/);
      // The other tables went on; the one carrying the trigger was not written.
      const titles = await admin.query(`SELECT "title" FROM ${deals}`);
      expect(titles.rows.map((r: { title: string }) => r.title)).not.toContain('pulled past the trigger?');
      expect((await ws.allRecords('crm', 'notes')).map((r) => r.values.body)).toContain('must stay upstream');

      const check = await runWsmirror(['check'], env, { cwd });
      expect(check.code, check.stdout).toBe(78);
      expect(check.stdout).toContain(`table ${schema}.crm__deals carries trigger zz_evil`);

      // On a catalog table too (the daemon writes _wsmirror_tables every pull): nothing is written.
      await admin.query(`DROP TRIGGER zz_evil ON ${deals}`);
      await admin.query(`CREATE TRIGGER zz_evil AFTER UPDATE ON ${quoteId(schema)}."_wsmirror_tables" FOR EACH STATEMENT EXECUTE FUNCTION ${quoteId(app)}.evil()`);
      const refused = await runWsmirror(['sync'], env, { cwd });
      expect(refused.code).not.toBe(0);
      expect(refused.stdout + refused.stderr).toContain(`DROP TRIGGER zz_evil ON ${schema}._wsmirror_tables`);
      // The database's message says it is wsmirror's (any SQL client may meet it); stderr says so once.
      expect(refused.stderr).toMatch(/crm\.deals: nothing was written/);
      expect(await forged()).toBe(0);

      // A trigger of the daemon's own role, on a function only it may execute, keeps working.
      await admin.query(`DROP TRIGGER zz_evil ON ${quoteId(schema)}."_wsmirror_tables"`);
      const audit = `${quoteId(schema)}."audit_${suffix}"`;
      const daemon = new pg.Client({ connectionString: roleUrl });
      await daemon.connect();
      try {
        await daemon.query(`CREATE TABLE ${audit} (n int)`);
        await daemon.query(`CREATE FUNCTION ${quoteId(schema)}."audit_fn_${suffix}"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO ${audit} VALUES (1); RETURN NULL; END $$`);
        await daemon.query(`REVOKE ALL ON FUNCTION ${quoteId(schema)}."audit_fn_${suffix}"() FROM PUBLIC`);
        await daemon.query(`CREATE TRIGGER audit AFTER INSERT OR UPDATE ON ${deals} FOR EACH STATEMENT EXECUTE FUNCTION ${quoteId(schema)}."audit_fn_${suffix}"()`);
      } finally {
        await daemon.end();
      }
      const fine = await runWsmirror(['sync'], env, { cwd });
      expect(fine.code, fine.stdout + fine.stderr).toBe(0);
      const after = await admin.query(`SELECT "title" FROM ${deals}`);
      expect(after.rows.map((r: { title: string }) => r.title)).toContain('pulled past the trigger?');
      expect(Number((await admin.query(`SELECT count(*) AS n FROM ${audit}`)).rows[0].n)).toBeGreaterThan(0);
      await admin.query(`DROP TRIGGER audit ON ${deals}`);
      expect((await ws.allRecords('crm', 'notes')).map((r) => r.values.body)).toContain('must stay upstream');
    } finally {
      await editor.end().catch(() => {});
      await admin.query(`DROP TRIGGER IF EXISTS zz_evil ON ${deals}`);
      await admin.query(`DROP TRIGGER IF EXISTS zz_evil ON ${quoteId(schema)}."_wsmirror_tables"`);
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(app)} CASCADE`);
      await dropRoles(admin, writer);
    }
  }, 120_000);

  it('MAINTAIN (PostgreSQL 17+, in GRANT ALL), which lets a reader lock a table against the daemon, is named by check and revoked by sync', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema }, { WSMIRROR_LOG_LEVEL: 'warn' });
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    const version = Number((await admin.query<{ v: string }>(`SELECT current_setting('server_version_num') AS v`)).rows[0]!.v);
    const reader = `wsm_maint_${suffix}`;
    const outbox = `${quoteId(schema)}."_wsmirror_outbox"`;
    const deals = `${quoteId(schema)}."crm__deals"`;
    await admin.query(`CREATE ROLE ${quoteId(reader)} LOGIN`);
    const bi = new pg.Client({ connectionString: pgUrlAs(reader) });
    /** Whether the reader may take the strongest lock on `table` (which stalls the daemon and every capture). */
    const canLock = async (table: string) => {
      await bi.query('BEGIN');
      try {
        await bi.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE NOWAIT`);
        return true;
      } catch (error) {
        expect(String(error)).toMatch(/permission denied/);
        return false;
      } finally {
        await bi.query('ROLLBACK');
      }
    };
    try {
      await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(schema)} TO ${quoteId(reader)}`);
      await admin.query(`GRANT SELECT ON ${deals}, ${outbox} TO ${quoteId(reader)}`);
      await bi.connect();
      expect(await canLock(outbox)).toBe(false);
      await admin.query(`GRANT ALL ON ${deals}, ${outbox} TO ${quoteId(reader)}`);
      await admin.query(`REVOKE INSERT, UPDATE, DELETE, TRUNCATE, TRIGGER, REFERENCES ON ${deals}, ${outbox} FROM ${quoteId(reader)}`);
      // On 17+ what GRANT ALL left beside SELECT is MAINTAIN, which allows LOCK TABLE in any mode.
      expect(await canLock(outbox)).toBe(version >= 170_000);

      const check = await runWsmirror(['check'], env, { cwd });
      const sync = await runWsmirror(['sync'], env, { cwd });
      expect(sync.code, sync.stderr).toBe(0);
      expect(await canLock(outbox)).toBe(false);
      expect(await canLock(deals)).toBe(false);
      if (version >= 170_000) {
        expect(check.code, check.stdout).toBe(78);
        expect(check.stdout).toContain(`role ${reader} has MAINTAIN on ${schema}._wsmirror_outbox`);
        expect(check.stdout).toContain(`role ${reader} has MAINTAIN on ${schema}.crm__deals`);
        expect(sync.stdout + sync.stderr).toMatch(new RegExp(`role ${reader} had MAINTAIN on ${schema}\._wsmirror_outbox, ${schema}\.crm__deals.*LOCK TABLE.*revoked`));
      } else {
        expect(check.code, check.stdout).toBe(0);
        expect(sync.stdout + sync.stderr).not.toContain(reader);
      }
      expect((await runWsmirror(['check'], env, { cwd })).code).toBe(0);
    } finally {
      await bi.end().catch(() => {});
      await dropRoles(admin, reader);
    }
  }, 120_000);

  it('a right another role granted (holding it WITH GRANT OPTION) is revoked too, down the chain; the warning names each role', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema }, { WSMIRROR_LOG_LEVEL: 'warn' });
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    const lead = `wsm_lead_${suffix}`;
    const member = `wsm_member_${suffix}`;
    const deals = `${quoteId(schema)}."crm__deals"`;
    const rights = async (role: string) => (await admin.query<{ trigger: boolean; truncate: boolean; select: boolean }>(
      `SELECT has_table_privilege($1, $2, 'TRIGGER') AS trigger, has_table_privilege($1, $2, 'TRUNCATE') AS truncate,
        has_table_privilege($1, $2, 'SELECT') AS select`, [role, `${quoteId(schema)}.${quoteId('crm__deals')}`],
    )).rows[0]!;
    await admin.query(`CREATE ROLE ${quoteId(lead)} LOGIN`);
    await admin.query(`CREATE ROLE ${quoteId(member)} LOGIN`);
    const leader = new pg.Client({ connectionString: pgUrlAs(lead) });
    try {
      await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(schema)} TO ${quoteId(lead)}, ${quoteId(member)}`);
      // The team lead may hand on what it holds; it hands TRIGGER and TRUNCATE to a member.
      await admin.query(`GRANT ALL ON ${deals} TO ${quoteId(lead)} WITH GRANT OPTION`);
      await leader.connect();
      await leader.query(`GRANT SELECT, TRIGGER, TRUNCATE ON ${deals} TO ${quoteId(member)}`);
      expect(await rights(member)).toEqual({ trigger: true, truncate: true, select: true });

      const sync = await runWsmirror(['sync'], env, { cwd });
      const said = sync.stdout + sync.stderr;
      expect(sync.code, said).toBe(0);
      expect(await rights(lead)).toMatchObject({ trigger: false, truncate: false, select: true });
      expect(await rights(member)).toEqual({ trigger: false, truncate: false, select: true });
      expect(said).toMatch(new RegExp(`role ${lead} had [A-Z, ]*TRIGGER[A-Z, ]* on ${schema}\\.crm__deals.*revoked`));
      expect(said).toMatch(new RegExp(`role ${member} had TRIGGER, TRUNCATE on ${schema}\\.crm__deals \\(granted by ${lead}\\).*revoked`));
      expect(said).not.toMatch(/not revoked|could not/);
      const check = await runWsmirror(['check'], env, { cwd });
      expect(check.code, check.stdout).toBe(0);
    } finally {
      await leader.end().catch(() => {});
      // What the lead granted goes with its own grant.
      await admin.query(`REVOKE ALL ON ${deals} FROM ${quoteId(lead)} CASCADE`);
      await dropRoles(admin, member, lead);
    }
  }, 120_000);

  it('column-level rights (a write of a catalog column, REFERENCES on a mirrored column) are named by check and revoked by sync like the table-level ones', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema }, { WSMIRROR_LOG_LEVEL: 'warn' });
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    const writer = `wsm_columns_${suffix}`;
    const catalog = `${quoteId(schema)}."_wsmirror_tables"`;
    const deals = `${quoteId(schema)}."crm__deals"`;
    const rights = async () => (await admin.query<{ update: boolean; references: boolean; select: boolean }>(
      `SELECT has_column_privilege($1, $2, 'sql_name', 'UPDATE') AS update, has_column_privilege($1, $3, 'id', 'REFERENCES') AS references,
        has_column_privilege($1, $3, 'id', 'SELECT') AS select`, [writer, `${quoteId(schema)}."_wsmirror_tables"`, `${quoteId(schema)}."crm__deals"`],
    )).rows[0]!;
    await admin.query(`CREATE ROLE ${quoteId(writer)} LOGIN`);
    try {
      await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(schema)} TO ${quoteId(writer)}`);
      // A catalog column rewritten swaps which upstream table a local edit goes to; a foreign key
      // of the writer's own table onto a mirrored one blocks every pull of it.
      await admin.query(`GRANT SELECT, UPDATE ("sql_name") ON ${catalog} TO ${quoteId(writer)}`);
      await admin.query(`GRANT SELECT, INSERT, UPDATE, DELETE, REFERENCES ("id") ON ${deals} TO ${quoteId(writer)}`);
      expect(await rights()).toEqual({ update: true, references: true, select: true });

      const check = await runWsmirror(['check'], env, { cwd });
      expect(check.code, check.stdout).toBe(78);
      expect(check.stdout).toContain(`role ${writer} has UPDATE on ${schema}._wsmirror_tables`);
      expect(check.stdout).toContain(`role ${writer} has REFERENCES on ${schema}.crm__deals`);

      const sync = await runWsmirror(['sync'], env, { cwd });
      const said = sync.stdout + sync.stderr;
      expect(sync.code, said).toBe(0);
      expect(said).toMatch(new RegExp(`role ${writer} had REFERENCES, UPDATE on ${schema}\\._wsmirror_tables, ${schema}\\.crm__deals.*revoked`));
      expect(said).not.toMatch(/could not/);
      expect(await rights()).toEqual({ update: false, references: false, select: true });
      expect((await runWsmirror(['check'], env, { cwd })).code).toBe(0);
    } finally {
      await admin.query(`REVOKE ALL ON ${catalog}, ${deals} FROM ${quoteId(writer)} CASCADE`);
      await dropRoles(admin, writer);
    }
  }, 120_000);

  it('a role granted TRUNCATE on the outbox (row-level security does not cover it) cannot empty it before the revoke: pending edits stay and are pushed', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema }, { WSMIRROR_LOG_LEVEL: 'warn' });
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    const writer = `wsm_trunc_${suffix}`;
    const outbox = `${quoteId(schema)}."_wsmirror_outbox"`;
    const pending = async () => Number((await admin.query(`SELECT count(*) AS n FROM ${outbox}`)).rows[0].n);
    await admin.query(`CREATE ROLE ${quoteId(writer)} LOGIN`);
    const bi = new pg.Client({ connectionString: pgUrlAs(writer) });
    try {
      await admin.query(`INSERT INTO ${quoteId(schema)}."crm__deals" ("title") VALUES ('kept through a TRUNCATE')`);
      expect(await pending()).toBeGreaterThan(0);
      await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(schema)} TO ${quoteId(writer)}`);
      // As GRANT ALL ON ALL TABLES IN SCHEMA gives it, in the window before the next cycle's revoke.
      await admin.query(`GRANT SELECT, TRUNCATE ON ${outbox} TO ${quoteId(writer)}`);
      await bi.connect();
      await expect(bi.query(`TRUNCATE ${outbox}`)).rejects.toThrow(new RegExp(`TRUNCATE of ${schema}\\._wsmirror_outbox by role ${writer}`));
      expect(await pending()).toBeGreaterThan(0);

      const sync = await runWsmirror(['sync'], env, { cwd });
      expect(sync.code, sync.stdout + sync.stderr).toBe(0);
      expect(sync.stdout + sync.stderr).not.toContain('carries trigger');
      expect(await pending()).toBe(0);
      expect((await new UpstreamWorkspace(emu).allRecords('crm', 'deals')).map((r) => r.values.title)).toContain('kept through a TRUNCATE');
      const check = await runWsmirror(['check'], env, { cwd });
      expect(check.code, check.stdout).toBe(0);
    } finally {
      await bi.end().catch(() => {});
      await admin.query(`REVOKE ALL ON ${outbox} FROM ${quoteId(writer)} CASCADE`);
      await dropRoles(admin, writer);
    }
  }, 120_000);

  it('a write grant on the outbox made while run is up: a forged entry is refused, and the grant revoked by the next cycle, naming the role', async () => {
    const env = daemonEnv(emu, { url: roleUrl, pgSchema: schema }, { WSMIRROR_LOG_LEVEL: 'info', WSMIRROR_SCHEDULE: '1s' });
    const ws = new UpstreamWorkspace(emu);
    const [victim] = await ws.createRecords('crm', 'notes', [{ body: 'must stay upstream, run' }]);
    const writer = `wsm_forger_${suffix}`;
    const outbox = `${quoteId(schema)}."_wsmirror_outbox"`;
    const rights = async () => (await admin.query<{ insert: boolean; update: boolean; truncate: boolean }>(
      `SELECT has_table_privilege($1, $2, 'INSERT') AS insert, has_table_privilege($1, $2, 'UPDATE') AS update,
        has_table_privilege($1, $2, 'TRUNCATE') AS truncate`, [writer, `${quoteId(schema)}."_wsmirror_outbox"`],
    )).rows[0]!;
    await admin.query(`CREATE ROLE ${quoteId(writer)} LOGIN`);
    const forger = new pg.Client({ connectionString: pgUrlAs(writer) });
    const run = startWsmirror(['run'], env, { cwd, killAfterMs: 100_000 });
    try {
      const cycles = (out: string) => (out.match(/"cycle":\{/g) ?? []).length;
      await run.waitFor('a first cycle', (out) => cycles(out) >= 1, 60_000);
      await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(schema)} TO ${quoteId(writer)}`);
      // Granted first, so taken back by the cycle that takes back the outbox's rights, or before.
      await admin.query(`GRANT UPDATE ("sql_name") ON ${quoteId(schema)}."_wsmirror_tables" TO ${quoteId(writer)}`);
      await admin.query(`GRANT INSERT, UPDATE ON ${outbox} TO ${quoteId(writer)}`);
      await admin.query(`GRANT SELECT, TRUNCATE ON ALL TABLES IN SCHEMA ${quoteId(schema)} TO ${quoteId(writer)}`);
      await forger.connect();
      // However soon after the grant: the outbox takes entries from the daemon's role only.
      await expect(forger.query(`INSERT INTO ${outbox} ("table_id", "sql_table", "record_id", "operation")
        SELECT "table_id", 'crm__notes', ${victim}, 'delete' FROM ${quoteId(schema)}."_wsmirror_tables" WHERE "sql_name" = 'crm__notes'`))
        .rejects.toThrow(/row-level security|permission denied/);
      const updated = await forger.query(`UPDATE ${outbox} SET "operation" = 'delete'`).catch((error: Error) => error);
      expect(updated instanceof Error ? 0 : updated.rowCount).toBe(0);
      // The next cycle takes the rights back and says whose they were.
      await run.waitFor('the revoke', (out, err) => new RegExp(`role ${writer} had [A-Z, ]*INSERT[A-Z, ]* on [^"]*${schema}\\._wsmirror_outbox[^"]*revoked`).test(out + err), 30_000);
      expect(await rights()).toEqual({ insert: false, update: false, truncate: false });
      expect((await admin.query<{ can: boolean }>(`SELECT has_column_privilege($1, $2, 'sql_name', 'UPDATE') AS can`,
        [writer, `${quoteId(schema)}."_wsmirror_tables"`])).rows[0]!.can).toBe(false);
      const seen = cycles(run.output().stdout);
      await run.waitFor('another cycle', (out) => cycles(out) > seen, 30_000);
      expect((await ws.allRecords('crm', 'notes')).map((r) => r.values.body)).toContain('must stay upstream, run');
    } finally {
      await stopProcess(run.child, 'SIGTERM');
      await run.exited;
      await forger.end().catch(() => {});
      await admin.query(`REVOKE ALL ON ALL TABLES IN SCHEMA ${quoteId(schema)} FROM ${quoteId(writer)}`);
      await dropRoles(admin, writer);
    }
  }, 120_000);

  it('check names the privilege a first sync would lack: CREATE on the database, or on the schema', async () => {
    const bare = `wsm_bare_${suffix}`;
    await admin.query(`CREATE ROLE ${quoteId(bare)} LOGIN`);
    const database = (await admin.query<{ db: string }>('SELECT current_database() AS db')).rows[0]!.db;
    await admin.query(`REVOKE CREATE ON DATABASE ${quoteId(database)} FROM ${quoteId(bare)}`);
    const bareUrl = pgUrlAs(bare);
    const usable = `wsm_usable_${suffix}`;
    try {
      // No schema yet, and no right to create one.
      const missing = await runWsmirror(['check'], daemonEnv(emu, { url: bareUrl, pgSchema: `wsm_none_${suffix}` }), { cwd });
      expect(missing.code, missing.stdout).toBe(78);
      expect(missing.stdout).toMatch(new RegExp(`role ${bare} cannot create schema wsm_none_${suffix}: it has no CREATE on database ${database}`));
      // A schema it may use but not create in.
      await admin.query(`CREATE SCHEMA ${quoteId(usable)}`);
      await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(usable)} TO ${quoteId(bare)}`);
      const noCreate = await runWsmirror(['check'], daemonEnv(emu, { url: bareUrl, pgSchema: usable }), { cwd });
      expect(noCreate.code, noCreate.stdout).toBe(78);
      expect(noCreate.stdout).toMatch(new RegExp(`role ${bare} has no CREATE on schema ${usable}`));
      // The schema that hint makes, its name quoted as SQL needs it.
      const odd = `Wsm-M"q'x_${suffix}`;
      const quoted = await runWsmirror(['check'], daemonEnv(emu, { url: bareUrl, pgSchema: odd }), { cwd });
      expect(quoted.code, quoted.stdout).toBe(78);
      expect(quoted.stdout).toContain(`CREATE SCHEMA "Wsm-M""q'x_${suffix}" AUTHORIZATION "${bare}"`);
      // An empty schema it may create in: no mirror there yet, though the schema exists.
      await admin.query(`GRANT CREATE ON SCHEMA ${quoteId(usable)} TO ${quoteId(bare)}`);
      const empty = await runWsmirror(['check'], daemonEnv(emu, { url: bareUrl, pgSchema: usable }), { cwd });
      expect(empty.code, empty.stdout).toBe(0);
      expect(empty.stdout).toContain(`(schema ${usable}): no wsmirror catalog there yet: the first sync creates it`);
      expect(empty.stdout).not.toContain('does not exist');
      // Without USAGE on it, status and check say they cannot open it: they would set nothing up.
      await admin.query(`REVOKE ALL ON SCHEMA ${quoteId(usable)} FROM ${quoteId(bare)}`);
      for (const command of ['status', 'check']) {
        const denied = await runWsmirror([command], daemonEnv(emu, { url: bareUrl, pgSchema: usable }), { cwd });
        expect(denied.code, denied.stdout).toBe(78);
        expect(denied.stdout + denied.stderr).toMatch(new RegExp(`cannot open the Postgres mirror .* \\(schema ${usable}\\): permission denied for schema ${usable}`));
        expect(denied.stdout + denied.stderr).not.toContain('cannot set up');
      }
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(usable)} CASCADE`);
      await dropRoles(admin, bare);
    }
  }, 60_000);
});
