import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { dropRoles, grantReadAccess, pgUrlAs } from '../helpers/test-roles.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * `wsmirror status` as the read-only role of docs/querying.md ("Read access on Postgres"), which
 * may read the catalog but not the outbox: it reports the tables and cycles, says the outbox is
 * not readable by this role, and its exit code is the mirror's health.
 */
describe('Postgres: wsmirror status as the BI role of docs/querying.md (real processes)', () => {
  const suffix = randomBytes(5).toString('hex');
  const owner = `wsm_sro_owner_${suffix}`;
  const bi = `wsm_sro_bi_${suffix}`;
  const schema = `wsm_sro_${suffix}`;
  const cwd = mkdtempSync(join(tmpdir(), 'wsmirror-status-role-'));
  let admin: pg.Client;
  let emu: RunningEmulator;
  let env: Record<string, string>;

  beforeAll(async () => {
    if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
    admin = new pg.Client({ connectionString: testPgUrl });
    await admin.connect();
    await admin.query(`CREATE ROLE ${quoteId(owner)} LOGIN`);
    await admin.query(`CREATE ROLE ${quoteId(bi)} LOGIN`);
    await admin.query(`CREATE SCHEMA ${quoteId(schema)} AUTHORIZATION ${quoteId(owner)}`);
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
    await ws.createRecords('crm', 'deals', [{ title: 'a' }, { title: 'b' }]);
    env = daemonEnv(emu, { url: pgUrlAs(owner), pgSchema: schema });
  });

  afterAll(async () => {
    await emu?.close();
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await dropRoles(admin, bi, owner);
      await admin.end();
    }
    rmSync(cwd, { recursive: true, force: true });
  });

  it('reports tables and cycles, says the outbox is not readable (naming the GRANT), and exits by the mirror\'s health', async () => {
    const sync = await runWsmirror(['sync'], env, { cwd });
    expect(sync.code, sync.stderr).toBe(0);
    // The grants exactly as docs/querying.md gives them.
    const s = quoteId(schema);
    await grantReadAccess(admin, schema, owner, bi);

    const asBi = mirrorEnv({ url: pgUrlAs(bi), pgSchema: schema });
    const text = await runWsmirror(['status'], asBi, { cwd });
    expect(text.stderr).toBe('');
    expect(text.code, text.stdout).toBe(0);
    expect(text.stdout).toMatch(/^crm\.deals +crm__deals +history +ready +2 /m);
    expect(text.stdout).toMatch(/cycles: last success \S+/);
    expect(text.stdout).toContain(`outbox: not readable by the role ${bi}`);
    expect(text.stdout).toContain(`GRANT SELECT ON ${s}."_wsmirror_outbox" TO ${quoteId(bi)}`);
    expect(text.stdout).not.toContain('needs attention');

    const json = await runWsmirror(['status', '--json'], asBi, { cwd });
    expect(json.code, json.stdout).toBe(0);
    const report = JSON.parse(json.stdout) as { outbox: unknown; outboxUnreadable: string | null; tables: { outbox: unknown; status: string }[]; attention: string[] };
    expect(report.outbox).toBeNull();
    expect(report.outboxUnreadable).toContain('GRANT SELECT');
    expect(report.tables.map((x) => [x.status, x.outbox])).toEqual([['ready', null]]);
    expect(report.attention).toEqual([]);

    // Unhealthy is still told: a table failing makes it exit 1 for this role too.
    await admin.query(`UPDATE ${s}."_wsmirror_tables" SET last_error_code = 'UPSTREAM_500', last_error = 'boom', last_error_at = $1`, [new Date().toISOString()]);
    const failing = await runWsmirror(['status'], asBi, { cwd });
    expect(failing.code, failing.stdout).toBe(1);
    expect(failing.stdout).toContain('crm.deals is failing since');

    // With the outbox granted, the counts are back.
    await admin.query(`GRANT SELECT ON ${s}."_wsmirror_outbox" TO ${quoteId(bi)}`);
    const granted = await runWsmirror(['status'], asBi, { cwd });
    expect(granted.stdout).toMatch(/outbox: 0 pending, 0 failed, 0 conflict/);
  }, 120_000);
});
