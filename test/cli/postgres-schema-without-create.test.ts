import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { dropRoles, pgUrlAs } from '../helpers/test-roles.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A role that may use the mirror's schema but not create in it (the schema belongs to another
 * role, CREATE revoked after the first sync): a schema change that needs CREATE there fails its
 * own table only, naming the table and the grant, and the other tables go on syncing.
 */
describe('Postgres: a schema change the role may not make in its schema (real processes)', () => {
  const suffix = randomBytes(5).toString('hex');
  const role = `wsm_nocreate_${suffix}`;
  const schema = `wsm_nocreate_${suffix}`;
  const cwd = mkdtempSync(join(tmpdir(), 'wsmirror-nocreate-'));
  let admin: pg.Client;
  let emu: RunningEmulator;
  let ws: UpstreamWorkspace;
  let env: Record<string, string>;

  beforeAll(async () => {
    if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
    admin = new pg.Client({ connectionString: testPgUrl });
    await admin.connect();
    await admin.query(`CREATE ROLE ${quoteId(role)} LOGIN`);
    // The schema belongs to the administrator; the role gets USAGE and CREATE for its first sync.
    await admin.query(`CREATE SCHEMA ${quoteId(schema)}`);
    await admin.query(`GRANT USAGE, CREATE ON SCHEMA ${quoteId(schema)} TO ${quoteId(role)}`);
    emu = await startEmulator();
    ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
    await ws.createTable('crm', 'notes', { hasHistory: true }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    await ws.createRecords('crm', 'deals', [{ title: 'a' }]);
    await ws.createRecords('crm', 'notes', [{ body: 'x' }]);
    env = daemonEnv(emu, { url: pgUrlAs(role), pgSchema: schema });
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

  it('fails only the changed table, naming it and the missing CREATE; the others sync', async () => {
    const first = await runWsmirror(['sync'], env, { cwd });
    expect(first.code, first.stderr).toBe(0);
    await admin.query(`REVOKE CREATE ON SCHEMA ${quoteId(schema)} FROM ${quoteId(role)}`);

    await ws.addFields('crm', 'deals', [{ name: 'stage', type: 'string', labels: { '': 'Stage' } }]);
    await ws.createRecords('crm', 'notes', [{ body: 'y' }]);
    const grant = `GRANT CREATE ON SCHEMA "${schema}" TO "${role}"`;
    const sync = await runWsmirror(['sync', '--json'], env, { cwd });
    expect(sync.code, sync.stderr).toBe(1);
    const report = JSON.parse(sync.stdout) as { tables: { table: string; action: string; error?: { code: string; message: string } }[] };
    const deals = report.tables.find((t) => t.table === 'crm.deals')!;
    expect(deals.action).toBe('failed');
    expect(deals.error!.code).toBe('MIRROR');
    expect(deals.error!.message).toContain('the mirror refused the schema change of table crm.deals');
    expect(deals.error!.message).toContain(`role ${role} has no CREATE on schema ${schema}`);
    expect(deals.error!.message).toContain(grant);
    expect(sync.stderr).toContain(`wsmirror sync: crm.deals: the mirror refused the schema change of table crm.deals`);
    expect(report.tables.find((t) => t.table === 'crm.notes')!.action).not.toBe('failed');
    const notes = await admin.query(`SELECT "body" FROM ${quoteId(schema)}."crm__notes" ORDER BY "id"`);
    expect(notes.rows.map((r: { body: string }) => r.body)).toEqual(['x', 'y']);
    // The table is kept as it was: no column added, its view and capture in place.
    const columns = await admin.query(`SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'crm__deals'`, [schema]);
    expect(columns.rows.map((r: { column_name: string }) => r.column_name)).not.toContain('stage');

    // check says the same of the role.
    const check = await runWsmirror(['check'], env, { cwd });
    expect(check.stdout).toContain(grant);

    // Granted, the next sync applies the change.
    await admin.query(grant);
    const after = await runWsmirror(['sync'], env, { cwd });
    expect(after.code, after.stderr).toBe(0);
    const stages = await admin.query(`SELECT "title", "stage" FROM ${quoteId(schema)}."crm__deals_v" ORDER BY "id"`);
    expect(stages.rows).toEqual([{ title: 'a', stage: null }]);
  }, 120_000);
});
