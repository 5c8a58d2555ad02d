import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { dropRoles, grantReadAccess, pgUrlAs } from '../helpers/test-roles.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/** The read access of docs/querying.md ("Read access on Postgres"), as it holds across schema changes. */
describe('Postgres: a BI role given read access as docs/querying.md says (real processes)', () => {
  const suffix = randomBytes(5).toString('hex');
  const owner = `wsm_ra_owner_${suffix}`;
  const bi = `wsm_ra_bi_${suffix}`;
  const schema = `wsm_ra_${suffix}`;
  const cwd = mkdtempSync(join(tmpdir(), 'wsmirror-read-access-'));
  let admin: pg.Client;
  let reader: pg.Client;
  let emu: RunningEmulator;
  let ws: UpstreamWorkspace;
  let env: Record<string, string>;

  const reads = (relation: string) => reader.query(`SELECT count(*) FROM ${quoteId(schema)}.${quoteId(relation)}`).then(() => true, (e: Error) => {
    if (!/permission denied/.test(e.message)) throw e;
    return false;
  });

  beforeAll(async () => {
    if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
    admin = new pg.Client({ connectionString: testPgUrl });
    await admin.connect();
    await admin.query(`CREATE ROLE ${quoteId(owner)} LOGIN`);
    await admin.query(`CREATE ROLE ${quoteId(bi)} LOGIN`);
    await admin.query(`CREATE SCHEMA ${quoteId(schema)} AUTHORIZATION ${quoteId(owner)}`);
    emu = await startEmulator();
    ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
    await ws.createTable('crm', 'notes', { hasHistory: true }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
    await ws.createRecords('crm', 'deals', [{ title: 'a' }]);
    await ws.createRecords('crm', 'notes', [{ body: 'x' }]);
    env = daemonEnv(emu, { url: pgUrlAs(owner), pgSchema: schema });
    reader = new pg.Client({ connectionString: pgUrlAs(bi) });
    await reader.connect();
  });

  afterAll(async () => {
    await reader?.end().catch(() => {});
    await emu?.close();
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await dropRoles(admin, bi, owner);
      await admin.end();
    }
    rmSync(cwd, { recursive: true, force: true });
  });

  it('reads every view and table but the outbox, a view after a REVOKE on its table, and a view again after a schema change that made it anew undid a REVOKE', async () => {
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    const s = quoteId(schema);
    await grantReadAccess(admin, schema, owner, bi);
    expect(await reads('crm__deals_v')).toBe(true);
    expect(await reads('_wsmirror_outbox')).toBe(false);

    // The views read as their owner: a REVOKE on the table, or on the option catalog, leaves the view readable.
    await admin.query(`REVOKE SELECT ON ${s}."crm__deals", ${s}."_wsmirror_choice_options" FROM ${quoteId(bi)}`);
    expect(await reads('crm__deals')).toBe(false);
    expect(await reads('crm__deals_v')).toBe(true);

    // A REVOKE on a view lasts while the view is made again in place (a field added), until a
    // change takes a column out of it (a field deleted): the view is then made anew.
    await admin.query(`REVOKE SELECT ON ${s}."crm__notes_v" FROM ${quoteId(bi)}`);
    expect(await reads('crm__notes_v')).toBe(false);
    await ws.addFields('crm', 'notes', [{ name: 'topic', type: 'string', labels: { '': 'Topic' } }]);
    await ws.createTable('crm', 'tasks', { hasHistory: true }, [{ name: 'what', type: 'string', labels: { '': 'What' } }]);
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    expect(await reads('crm__notes_v')).toBe(false);
    await ws.deleteField('crm', 'notes', 'topic');
    expect((await runWsmirror(['sync'], env, { cwd })).code).toBe(0);
    expect(await reads('crm__notes_v')).toBe(true);
    // New tables and their views come with the default privileges; the outbox stays revoked.
    expect(await reads('crm__tasks')).toBe(true);
    expect(await reads('crm__tasks_v')).toBe(true);
    expect(await reads('_wsmirror_outbox')).toBe(false);
  }, 120_000);
});
