import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { daemonsOnPostgres } from '../helpers/postgres-daemon-suite.ts';
import { runWsmirror } from '../helpers/processes.ts';

/**
 * Opening a Postgres mirror while an application's transaction that edited it is still open
 * (real processes): the edit's capture holds the outbox's ROW EXCLUSIVE lock until it commits.
 */
describe('Postgres: opening a mirror under an application\'s open transaction (real processes)', () => {
  const { mirrorOf } = daemonsOnPostgres('wsm_openlock');

  /** Runs `run` while an application's transaction that edited the mirror (`edit`) is open. */
  async function withOpenEdit(schema: string, edit: string, run: (appPid: number) => Promise<void>) {
    const app = new pg.Client({ connectionString: testPgUrl, application_name: 'billing-app' });
    await app.connect();
    try {
      await app.query('BEGIN');
      await app.query(edit.replaceAll('PEOPLE', `${quoteId(schema)}.crm__people`));
      await run((await app.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    } finally {
      await app.end();
    }
  }

  it('a mirror whose catalog is complete takes no lock to open: sync runs at once', async () => {
    const { schema, env } = mirrorOf();
    const first = await runWsmirror(['sync'], env);
    expect(first.code, first.stderr).toBe(0);
    // An INSERT locks no row the pull writes: only the outbox's table lock stands in the way.
    await withOpenEdit(schema, `INSERT INTO PEOPLE (name) VALUES ('Bea (held)')`, async () => {
      const started = Date.now();
      const res = await runWsmirror(['sync'], env, { killAfterMs: 30_000 });
      expect(res.code, res.stderr).toBe(0);
      expect(Date.now() - started).toBeLessThan(8_000);
    });
  }, 60_000);

  it('a catalog set-up that must wait for the lock fails as a lock (exit 1, systemd starts it again), not as a configuration error', async () => {
    const { schema, env } = mirrorOf();
    const first = await runWsmirror(['sync'], env);
    expect(first.code, first.stderr).toBe(0);
    // An index of the outbox to make again: its CREATE INDEX waits for the application's lock.
    const admin = new pg.Client({ connectionString: testPgUrl });
    await admin.connect();
    await admin.query(`DROP INDEX ${quoteId(schema)}."_wsmirror_outbox_record"`);
    await admin.end();
    await withOpenEdit(schema, `UPDATE PEOPLE SET name = 'Ada (held)'`, async (appPid) => {
      const res = await runWsmirror(['sync'], env, { killAfterMs: 40_000 });
      expect(res.signal, 'the set-up waited without bound').toBeNull();
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).not.toMatch(/configuration error/);
      expect(res.stderr).toContain(`pid ${appPid}`);
      expect(res.stderr).not.toMatch(/tried again at every cycle/);
    });
    const done = await runWsmirror(['sync'], env);
    expect(done.code, done.stderr).toBe(0);
  }, 90_000);
});
