import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { dropRoles, pgUrlAs } from '../helpers/test-roles.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * `wsmirror check` names the Postgres privileges the daemon would miss: a role that may only read
 * the mirror (USAGE and SELECT) is refused with each missing grant, the owner passes.
 */
describe('wsmirror check: Postgres privileges (real processes)', () => {
  const suffix = randomBytes(5).toString('hex');
  const reader = `wsm_reader_${suffix}`;
  const schema = `wsm_check_priv_${suffix}`;
  let admin: pg.Client;
  let emu: RunningEmulator;
  let readerUrl: string;

  beforeAll(async () => {
    if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
    await ws.createRecords('crm', 'deals', [{ title: 'a' }]);
    const made = await runWsmirror(['sync'], daemonEnv(emu, { url: testPgUrl, pgSchema: schema }));
    expect(made.code, made.stderr).toBe(0);

    admin = new pg.Client({ connectionString: testPgUrl });
    await admin.connect();
    await admin.query(`CREATE ROLE ${quoteId(reader)} LOGIN`);
    await admin.query(`GRANT USAGE ON SCHEMA ${quoteId(schema)} TO ${quoteId(reader)}`);
    await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA ${quoteId(schema)} TO ${quoteId(reader)}`);
    readerUrl = pgUrlAs(reader);
  });

  afterAll(async () => {
    await emu?.close();
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await dropRoles(admin, reader);
      await admin.end();
    }
  });

  it('refuses a read-only role, naming each missing privilege, and passes the owner', async () => {
    const refused = await runWsmirror(['check', '--json'], daemonEnv(emu, { url: readerUrl, pgSchema: schema }));
    expect(refused.code).toBe(78);
    const report = JSON.parse(refused.stdout) as { upstream: { ok: boolean }; mirror: { exists: boolean; ok: boolean; problems: string[] } };
    expect(report.upstream.ok).toBe(true);
    expect(report.mirror.exists).toBe(true);
    expect(report.mirror.problems).toEqual(expect.arrayContaining([
      `role ${reader} has no CREATE on schema ${schema}, which a schema change needs (it makes new tables there, and the readable `
        + `views and capture functions of the tables it changes): GRANT CREATE ON SCHEMA "${schema}" TO "${reader}"`,
      `role ${reader} has no INSERT, UPDATE, DELETE on ${schema}.crm__deals`,
      `role ${reader} does not own ${schema}.crm__deals (schema changes would fail)`,
      `role ${reader} has no INSERT, UPDATE, DELETE on ${schema}._wsmirror_outbox`,
    ]));

    const owner = await runWsmirror(['check'], daemonEnv(emu, { url: testPgUrl!, pgSchema: schema }));
    expect(owner.code, owner.stdout).toBe(0);
    expect(owner.stdout).toContain('exists, writable');
  }, 60_000);
});
