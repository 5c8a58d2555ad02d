import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { countLogLines, daemonEnv, startWsmirror, stopProcess } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * On Postgres the sync lock is a session advisory lock on a connection of its own, and the mirror's
 * other connections come and go: a server (or a middlebox) that closes idle sessions must neither
 * cost the daemon its lock unnoticed nor trip pg's warnings.
 */
describe('Postgres: the connections of a daemon (real processes)', () => {
  const schemas: string[] = [];
  let admin: pg.Client;
  let emu: RunningEmulator;

  beforeAll(async () => {
    if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
    admin = new pg.Client({ connectionString: testPgUrl });
    await admin.connect();
    emu = await startEmulator();
    const upstream = new UpstreamWorkspace(emu);
    await upstream.createModule('crm');
    await upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    await upstream.createRecords('crm', 'people', [{ name: 'Ada' }]);
  });

  afterAll(async () => {
    await emu?.close();
    if (admin) {
      for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await admin.end();
    }
  });

  /** A new schema's environment for `wsmirror`; `serverOptions` go in the URL's `options` (`-c name=value`). */
  const mirrorOf = (serverOptions?: string) => {
    const schema = `wsm_lock_${randomBytes(5).toString('hex')}`;
    schemas.push(schema);
    const url = new URL(testPgUrl!);
    if (serverOptions !== undefined) url.searchParams.set('options', serverOptions);
    return { schema, env: daemonEnv(emu, { url: url.toString(), pgSchema: schema }, { WSMIRROR_SCHEDULE: '1s', WSMIRROR_LOG_LEVEL: 'info' }) };
  };

  it('reconnects to a server that closes idle sessions (idle_session_timeout) without pg\'s DeprecationWarning', async () => {
    const { env } = mirrorOf('-c idle_session_timeout=300');
    const daemon = startWsmirror(['run'], env, { killAfterMs: 60_000 });
    // Each cycle finds its pooled connections closed by the server and opens new ones.
    await daemon.waitFor('four cycles', (stdout) => countLogLines(stdout, /^cycle done/) >= 4);
    await stopProcess(daemon.child);
    const result = await daemon.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/DeprecationWarning/);
  }, 90_000);
});
