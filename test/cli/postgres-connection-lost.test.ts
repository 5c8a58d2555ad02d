import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { startWsmirrorKilledAfterEach } from '../helpers/live-daemons.ts';
import { daemonsOnPostgres } from '../helpers/postgres-daemon-suite.ts';
import { countLogLines, stopProcess, type LiveWsmirror } from '../helpers/processes.ts';

const startWsmirror = startWsmirrorKilledAfterEach();

/**
 * A connection of the mirror ending while wsmirror uses it (a server restart, an administrator's
 * pg_terminate_backend, idle_session_timeout): the cycle fails with MIRROR_UNAVAILABLE, `sync`
 * exits 1 and `run` goes on to its next cycle. pg reports such an end as an 'error' event of the
 * client, which must not end the process as an unhandled one.
 */
describe('Postgres: a mirror connection ending while in use (real processes)', () => {
  const { fixture, mirrorOf } = daemonsOnPostgres('wsm_connlost');

  /**
   * Starts `args` while another session holds `table` of the mirror locked, waits for wsmirror to
   * wait on that lock, and ends the waiting session with pg_terminate_backend.
   */
  async function terminatedWhileWaiting(args: string[], env: Record<string, string>, schema: string, table: string): Promise<LiveWsmirror> {
    const locker = new pg.Client({ connectionString: testPgUrl });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query(`LOCK TABLE ${quoteId(schema)}.${quoteId(table)} IN ACCESS EXCLUSIVE MODE`);
      const daemon = startWsmirror(args, env, { killAfterMs: 60_000 });
      let terminated = 0;
      for (const started = Date.now(); terminated === 0; await new Promise((r) => setTimeout(r, 50))) {
        if (Date.now() - started > 8_000) throw new Error(`wsmirror never waited for the lock:\n${daemon.output().stdout}\n${daemon.output().stderr}`);
        const { rows } = await fixture.admin.query<{ ended: boolean }>(
          `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
            WHERE application_name = 'wsmirror' AND wait_event_type = 'Lock' AND $1 = ANY(pg_blocking_pids(pid))`,
          [(await locker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid],
        );
        terminated = rows.filter((r) => r.ended).length;
      }
      return daemon;
    } finally {
      await locker.end();
    }
  }

  /** A mirror synced once, with a local INSERT into crm.people for the next sync to push. */
  async function mirrorWithEdit(): Promise<{ schema: string; env: Record<string, string> }> {
    const { schema, env } = mirrorOf();
    const first = startWsmirror(['sync'], env, { killAfterMs: 30_000 });
    const done = await first.exited;
    expect(done.code, done.stderr).toBe(0);
    await fixture.admin.query(`INSERT INTO ${quoteId(schema)}.crm__people (name) VALUES ('Bea')`);
    return { schema, env };
  }

  // The push's write of the pushed row's id, in a transaction; its read of the outbox, not in one.
  it.each(['crm__people', '_wsmirror_outbox'])('sync, ended waiting for %s: exits 1 with MIRROR_UNAVAILABLE, no unhandled error event', async (table) => {
    const { schema, env } = await mirrorWithEdit();
    const daemon = await terminatedWhileWaiting(['sync'], env, schema, table);
    const result = await daemon.exited;
    expect(result.stderr).not.toMatch(/Unhandled 'error' event/);
    expect(result.code, result.stderr).toBe(1);
    expect(`${result.stdout}${result.stderr}`).toMatch(/MIRROR_UNAVAILABLE/);
    expect(`${result.stdout}${result.stderr}`).toMatch(/terminat/);
  }, 60_000);

  it('run: the cycle fails and the next one pushes the edit', async () => {
    const { schema, env } = await mirrorWithEdit();
    const daemon = await terminatedWhileWaiting(['run'], env, schema, 'crm__people');
    await daemon.waitFor('a cycle after the failure', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
    const { rows } = await fixture.admin.query(`SELECT name, id IS NOT NULL AS pushed FROM ${quoteId(schema)}.crm__people ORDER BY name`);
    expect(rows).toEqual([{ name: 'Ada', pushed: true }, { name: 'Bea', pushed: true }]);
    await stopProcess(daemon.child);
    const result = await daemon.exited;
    expect(result.stderr).not.toMatch(/Unhandled 'error' event/);
    expect(result.code, result.stderr).toBe(0);
    // The failure is logged as what it is, its code and message (no error class, no empty stack).
    const failed = result.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; err?: unknown })
      .find((l) => l.msg === 'push failed' || l.msg === 'table pull failed');
    expect(failed?.err).toEqual({ code: 'MIRROR_UNAVAILABLE', message: expect.stringMatching(/^the Postgres mirror's connection ended while in use: terminating connection/) });
  }, 90_000);

  it('sync on a server that ends sessions idle for 20 ms, with 2,000 edits to push: no unhandled error event', async () => {
    const { schema, env } = await mirrorWithEdit();
    await fixture.admin.query(`INSERT INTO ${quoteId(schema)}.crm__people (name) SELECT 'P' || i FROM generate_series(1, 1999) AS i`);
    const url = new URL(env.WSMIRROR_MIRROR_URL!);
    url.searchParams.set('options', '-c idle_session_timeout=20');
    const result = await startWsmirror(['sync'], { ...env, WSMIRROR_MIRROR_URL: url.toString() }, { killAfterMs: 60_000 }).exited;
    expect(result.stderr).not.toMatch(/Unhandled 'error' event/);
    expect(result.signal).toBeNull();
    // Whether a session ends under the sync depends on the machine's speed; when one does, it says so.
    if (result.code !== 0) expect(`${result.stdout}${result.stderr}`).toMatch(/MIRROR_UNAVAILABLE|connection ended/);
  }, 90_000);
});
