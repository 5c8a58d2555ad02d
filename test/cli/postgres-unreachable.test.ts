import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { freePort } from '../helpers/free-port.ts';
import { startWsmirrorKilledAfterEach } from '../helpers/live-daemons.ts';
import { startRoundTripCounter } from '../helpers/pg-round-trips.ts';
import { daemonsOnPostgres } from '../helpers/postgres-daemon-suite.ts';
import { countLogLines, runWsmirror, stopProcess } from '../helpers/processes.ts';

const startWsmirror = startWsmirrorKilledAfterEach();

/**
 * A Postgres server that cannot be reached, or refuses for a reason that passes, is no
 * configuration error: `sync` exits 1 (systemd restarts what exits 1, never what exits 78), and
 * `run` waits for it, trying again at each cycle. What a retry cannot fix stays exit 78.
 */
describe('Postgres: a mirror database not reachable yet (real processes)', () => {
  const { fixture, mirrorOf } = daemonsOnPostgres('wsm_unreach');

  /** The mirror's environment with the URL changed by `edit`. */
  const withUrl = (edit: (url: URL) => void) => {
    const { schema, env } = mirrorOf();
    const url = new URL(env.WSMIRROR_MIRROR_URL!);
    edit(url);
    return { schema, env: { ...env, WSMIRROR_MIRROR_URL: url.toString() }, url };
  };

  /** A role of its own, dropped afterwards by the caller. */
  const newRole = async (options: string) => {
    const role = `wsm_unreach_${randomBytes(4).toString('hex')}`;
    await fixture.admin.query(`CREATE ROLE ${quoteId(role)} LOGIN ${options}`);
    return role;
  };

  it('sync: a server nothing listens for exits 1 with the message, no configuration error', async () => {
    const port = await freePort();
    const { env } = withUrl((url) => (url.port = String(port)));
    const res = await runWsmirror(['sync'], env, { killAfterMs: 30_000 });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain(`cannot reach the Postgres mirror postgres://postgres@127.0.0.1:${port}/`);
    expect(res.stderr).toContain('ECONNREFUSED');
    expect(res.stderr).not.toContain('configuration error');
  }, 40_000);

  it('sync: a Unix-domain socket not there yet (the server not started) exits 1, no configuration error', async () => {
    const directory = mkdtempSync(join(tmpdir(), 'wsmirror-nosocket-'));
    try {
      const { env } = withUrl((url) => {
        url.hostname = '';
        url.searchParams.set('host', directory);
      });
      const res = await runWsmirror(['sync'], env, { killAfterMs: 30_000 });
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toContain(`${directory}/.s.PGSQL.`);
      expect(res.stderr).toContain('ENOENT');
      expect(res.stderr).not.toContain('configuration error');
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }, 40_000);

  it('sync: a role out of connections (too many connections for role) exits 1', async () => {
    const role = await newRole('CONNECTION LIMIT 0');
    try {
      const { env } = withUrl((url) => (url.username = role));
      const res = await runWsmirror(['sync'], env, { killAfterMs: 30_000 });
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toMatch(/cannot reach the Postgres mirror .*too many connections for role/);
    } finally {
      await fixture.admin.query(`DROP ROLE ${quoteId(role)}`);
    }
  }, 40_000);

  it('sync and run: an unknown database or role stays a configuration error, exit 78', async () => {
    const database = withUrl((url) => (url.pathname = '/wsm_no_such_database'));
    const role = withUrl((url) => (url.username = 'wsm_no_such_role'));
    for (const [env, message] of [[database.env, /database "wsm_no_such_database" does not exist/], [role.env, /role "wsm_no_such_role" does not exist/]] as const) {
      for (const command of ['sync', 'run']) {
        const res = await runWsmirror([command], env, { killAfterMs: 30_000 });
        expect(res.code, `${command}: ${res.stderr}`).toBe(78);
        expect(res.stderr).toMatch(/configuration error: cannot reach the Postgres mirror/);
        expect(res.stderr).toMatch(message);
      }
    }
  }, 60_000);

  it('run: waits for a server that comes up later, serving /readyz meanwhile, then syncs', async () => {
    const port = await freePort();
    const httpPort = await freePort();
    const { schema, env } = withUrl((url) => (url.port = String(port)));
    const daemon = startWsmirror(['run'], { ...env, WSMIRROR_HTTP_PORT: String(httpPort) }, { killAfterMs: 60_000 });
    const failures = (stdout: string) => countLogLines(stdout, /^sync cycle failed: cannot reach the Postgres mirror .*ECONNREFUSED/);
    await daemon.waitFor('two failed attempts', (stdout) => failures(stdout) >= 2);
    const ready = await fetch(`http://127.0.0.1:${httpPort}/readyz`);
    expect(ready.status).toBe(503);
    expect(((await ready.json()) as { reason: string }).reason).toMatch(/cannot reach the Postgres mirror .*ECONNREFUSED/);

    // The server appears where the daemon looks for it.
    const server = await startRoundTripCounter(testPgUrl!, { port });
    try {
      await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
      const { rows } = await fixture.admin.query(`SELECT name FROM ${quoteId(schema)}.crm__people`);
      expect(rows).toEqual([{ name: 'Ada' }]);
      await stopProcess(daemon.child);
      const result = await daemon.exited;
      expect(result.code, result.stderr).toBe(0);
    } finally {
      await server.close();
    }
  }, 90_000);
});
