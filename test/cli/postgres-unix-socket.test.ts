import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A server reached through its Unix-domain socket, named as libpq names it: the socket's directory
 * as `host` (in the query, or percent-encoded in the host part), with or without credentials.
 */
describe('Postgres through a Unix-domain socket (real processes)', () => {
  const schema = `wsm_socket_${randomBytes(5).toString('hex')}`;
  const cwd = mkdtempSync(join(tmpdir(), 'wsmirror-socket-'));
  let admin: pg.Client;
  let emu: RunningEmulator;
  let directory: string;
  let port: string;

  beforeAll(async () => {
    if (!testPgUrl) throw new Error('WSMIRROR_TEST_PG_URL is not set: run the tests with vitest, whose global setup provides a server');
    admin = new pg.Client({ connectionString: testPgUrl });
    await admin.connect();
    // The test server runs on this machine: its first socket directory, and the port naming the socket file.
    const { rows } = await admin.query<{ dirs: string; port: string }>(
      `SELECT current_setting('unix_socket_directories') AS dirs, current_setting('port') AS port`,
    );
    directory = rows[0]!.dirs.split(',')[0]!.trim();
    port = rows[0]!.port;
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
    await ws.createRecords('crm', 'deals', [{ title: 'a' }]);
  });

  afterAll(async () => {
    await emu?.close();
    if (admin) {
      await admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await admin.end();
    }
    rmSync(cwd, { recursive: true, force: true });
  });

  it.each([
    ['credentials and an empty host, the socket in the query', () => `postgres://postgres:unused@/postgres?host=${directory}&port=${port}`],
    ['a user and an empty host', () => `postgresql://postgres@/postgres?host=${encodeURIComponent(directory)}&port=${port}`],
    ['no authority at all', () => `postgresql:///postgres?user=postgres&host=${directory}&port=${port}`],
    ['the directory percent-encoded as the host', () => `postgres://postgres@${encodeURIComponent(directory)}:${port}/postgres`],
  ])('syncs with %s', async (_, url) => {
    // A host the driver would fall back to when it missed the URL's: the socket is the only way in.
    const env = daemonEnv(emu, { url: url(), pgSchema: schema }, { PGHOST: 'wsmirror-no-such-host.invalid' });
    const sync = await runWsmirror(['sync'], env, { cwd });
    expect(sync.code, sync.stderr).toBe(0);
    const { rows } = await admin.query(`SELECT "title" FROM ${quoteId(schema)}."crm__deals"`);
    expect(rows).toEqual([{ title: 'a' }]);
    const check = await runWsmirror(['check'], env, { cwd });
    expect(check.code, check.stdout).toBe(0);
  }, 60_000);
});
