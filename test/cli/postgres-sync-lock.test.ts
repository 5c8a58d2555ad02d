import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { daemonsOnPostgres } from '../helpers/postgres-daemon-suite.ts';
import { startWsmirrorKilledAfterEach } from '../helpers/live-daemons.ts';
import { countLogLines, runWsmirror, stopProcess } from '../helpers/processes.ts';

/** Daemons a failed test left running are killed with it. */
const startWsmirror = startWsmirrorKilledAfterEach();

/**
 * On Postgres the sync lock is a session advisory lock on a connection of its own, and the mirror's
 * other connections come and go: a server (or a middlebox) that closes idle sessions must neither
 * cost the daemon its lock unnoticed nor trip pg's warnings.
 */
describe('Postgres: the connections of a daemon (real processes)', () => {
  const { fixture, mirrorOf } = daemonsOnPostgres('wsm_lock');

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

  /** The application names of the sessions a daemon opened as a role of its own, after a cycle. */
  const applicationNames = async (applicationName: string | undefined) => {
    const role = `wsm_appname_${randomBytes(4).toString('hex')}`;
    const { schema, env } = mirrorOf();
    await fixture.admin.query(`CREATE ROLE ${quoteId(role)} LOGIN`);
    try {
      await fixture.admin.query(`CREATE SCHEMA ${quoteId(schema)} AUTHORIZATION ${quoteId(role)}`);
      const url = new URL(env.WSMIRROR_MIRROR_URL!);
      url.username = role;
      if (applicationName !== undefined) url.searchParams.set('application_name', applicationName);
      const daemon = startWsmirror(['run'], { ...env, WSMIRROR_MIRROR_URL: url.toString() }, { killAfterMs: 60_000 });
      await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
      const { rows } = await fixture.admin.query<{ name: string }>(
        'SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE usename = $1 ORDER BY 1', [role],
      );
      await stopProcess(daemon.child);
      expect((await daemon.exited).code).toBe(0);
      return rows.map((r) => r.name);
    } finally {
      await fixture.admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await fixture.admin.query(`DROP ROLE ${quoteId(role)}`);
    }
  };

  it('names every connection: wsmirror, and wsmirror sync lock for the lock\'s', async () => {
    expect(await applicationNames(undefined)).toEqual(['wsmirror', 'wsmirror sync lock']);
  }, 60_000);

  it('an application_name in the URL replaces wsmirror in both names', async () => {
    expect(await applicationNames('bi mirror')).toEqual(['bi mirror', 'bi mirror sync lock']);
  }, 60_000);
});

/** The key of a schema's sync lock, as docs/mirror.md gives it ($1: the schema). */
const LOCK_KEY_SQL = `(x'7773'::bigint << 48) | ('x' || left(encode(sha256(convert_to($1, 'UTF8')), 'hex'), 12))::bit(48)::bigint`;

/** The advisory lock class of the sync locks of wsmirror versions before that key. */
const OLDER_LOCK_CLASS = 0x77736d72;

describe('Postgres: a daemon that loses its sync lock (real processes)', () => {
  const { fixture, mirrorOf } = daemonsOnPostgres('wsm_lkloss');

  /** The backend holding the schema's sync lock, and its application name; undefined when none does. */
  const lockHolder = async (schema: string) => {
    const { rows } = await fixture.admin.query<{ pid: number; app: string }>(
      `SELECT l.pid, a.application_name AS app FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
       WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND (l.classid::bigint << 32 | l.objid::bigint) = ${LOCK_KEY_SQL}`,
      [schema],
    );
    return rows[0];
  };

  const cyclesDone = (stdout: string) => countLogLines(stdout, /^cycle done/);

  it('keeps its lock connection on a server that closes idle sessions (idle_session_timeout)', async () => {
    const { schema, env } = mirrorOf('-c idle_session_timeout=400');
    const daemon = startWsmirror(['run'], env, { killAfterMs: 60_000 });
    await daemon.waitFor('a cycle', (stdout) => cyclesDone(stdout) >= 1);
    const holder = await lockHolder(schema);
    expect(holder?.app).toBe('wsmirror sync lock');
    // Cycles a second apart: the lock connection idles well beyond the server's limit between them.
    await daemon.waitFor('three more cycles', (stdout) => cyclesDone(stdout) >= 4);
    expect(await lockHolder(schema)).toEqual(holder);
    await stopProcess(daemon.child);
    const result = await daemon.exited;
    expect(result.code, result.stderr).toBe(0);
    expect(countLogLines(result.stdout, /sync lock/)).toBe(0);
  }, 90_000);

  it('logs a lock connection terminated under it and takes the lock again at once; a sync started then is refused', async () => {
    const { schema, env } = mirrorOf();
    const daemon = startWsmirror(['run'], env, { killAfterMs: 60_000 });
    await daemon.waitFor('a cycle', (stdout) => cyclesDone(stdout) >= 1);
    const before = await lockHolder(schema);
    await fixture.admin.query('SELECT pg_terminate_backend($1, 5000)', [before!.pid]);

    await daemon.waitFor('the loss logged', (stdout) => countLogLines(stdout, /sync lock .* was lost with its connection/) === 1);
    await daemon.waitFor('the lock taken again', (stdout) => countLogLines(stdout, /took the sync lock .* again/) === 1);
    const after = await lockHolder(schema);
    expect(after?.app).toBe('wsmirror sync lock');
    expect(after?.pid).not.toBe(before!.pid);
    const loss = JSON.parse(daemon.output().stdout.split('\n').find((l) => /sync lock .* was lost with its connection/.test(l))!) as { level: string; msg: string };
    expect(loss.level).toBe('warn');
    expect(loss.msg).toContain(schema);

    const second = await runWsmirror(['sync'], env, { killAfterMs: 30_000 });
    expect(second.code, second.stderr).toBe(1);
    expect(second.stderr).toMatch(/in use by another wsmirror process/);
    // …and the daemon goes on with the lock it holds again.
    const cycles = cyclesDone(daemon.output().stdout);
    await daemon.waitFor('another cycle', (stdout) => cyclesDone(stdout) > cycles);
    await stopProcess(daemon.child);
    const result = await daemon.exited;
    expect(result.code, result.stderr).toBe(0);
  }, 90_000);

  it('lets the mirror go and waits, running no cycle, while another process took the lock when its connection was down; then takes it back', async () => {
    const { schema, env } = mirrorOf();
    const daemon = startWsmirror(['run'], env, { killAfterMs: 60_000 });
    await daemon.waitFor('a cycle', (stdout) => cyclesDone(stdout) >= 1);
    const before = await lockHolder(schema);
    // Another session waits for the lock before the daemon's session is ended, so it is granted
    // the moment that session is gone, ahead of the daemon's new one however the machine is loaded.
    const other = new pg.Client({ connectionString: testPgUrl });
    await other.connect();
    try {
      const otherPid = (await other.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const granted = other.query(`SELECT pg_advisory_lock(${LOCK_KEY_SQL})`, [schema]);
      const waiting = async () => (await fixture.admin.query('SELECT 1 FROM pg_locks WHERE pid = $1 AND locktype = $2 AND NOT granted', [otherPid, 'advisory'])).rowCount === 1;
      for (let i = 0; i < 100 && !(await waiting()); i++) await new Promise((r) => setTimeout(r, 50));
      expect(await waiting()).toBe(true);
      await fixture.admin.query('SELECT pg_terminate_backend($1)', [before!.pid]);
      await granted;
      // Another process syncs the mirror for now (an operator's sync): no exit, no cycle.
      const synced = (stdout: string) => countLogLines(stdout, new RegExp(`^sync cycle failed: the mirror .*${schema}.* is now synced by another wsmirror process`));
      const refused = (stdout: string) => countLogLines(stdout, new RegExp(`^sync cycle failed: the mirror .*${schema}.* is in use by another wsmirror process .*the session of pid ${otherPid} `));
      await daemon.waitFor('the loss and two refused cycles', (stdout) => synced(stdout) === 1 && refused(stdout) >= 2);
      // No cycle since (one under way when the lock went may have ended before it was found lost).
      const since = daemon.output().stdout.split(/\n(?=.*is now synced by another wsmirror process)/)[1]!;
      expect(cyclesDone(since)).toBe(0);
      expect(countLogLines(daemon.output().stdout, /sync lock .* was lost with its connection/)).toBe(1);
      expect((await lockHolder(schema))?.pid).toBe(otherPid);

      // The other process ends: the daemon takes the lock at its next cycle, and syncs.
      await other.query(`SELECT pg_advisory_unlock(${LOCK_KEY_SQL})`, [schema]);
      const cyclesBefore = cyclesDone(daemon.output().stdout);
      await daemon.waitFor('a cycle once the lock is free', (stdout) => cyclesDone(stdout) > cyclesBefore);
      expect((await lockHolder(schema))?.app).toBe('wsmirror sync lock');
      await stopProcess(daemon.child);
      const result = await daemon.exited;
      expect(result.code, result.stderr).toBe(0);
    } finally {
      await other.end();
    }
  }, 90_000);
});

describe('Postgres: the key of the sync lock (real processes)', () => {
  const { fixture, mirrorOf } = daemonsOnPostgres('wsm_lkkey');

  /** Two schemas of this suite whose 32-bit hashtext() collide, as the key of older versions did. */
  const collidingSchemas = async () => {
    const prefix = `wsm_lkkey_${randomBytes(3).toString('hex')}_`;
    const { rows: [pair] } = await fixture.admin.query<{ a: string; b: string }>(
      `SELECT $1 || min(i) AS a, $1 || max(i) AS b FROM generate_series(1, 400000) AS i GROUP BY hashtext($1 || i) HAVING count(*) > 1 LIMIT 1`,
      [prefix],
    );
    return [mirrorOf(), mirrorOf()].map((m, i) => {
      const schema = i === 0 ? pair!.a : pair!.b;
      return { schema, env: { ...m.env, WSMIRROR_PG_SCHEMA: schema } };
    });
  };

  it('two mirrors whose schema names collide under hashtext() do not block each other', async () => {
    const [a, b] = await collidingSchemas();
    try {
      const daemon = startWsmirror(['run'], a!.env, { killAfterMs: 60_000 });
      await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
      const other = await runWsmirror(['sync'], b!.env, { killAfterMs: 30_000 });
      expect(other.code, other.stderr).toBe(0);
      await stopProcess(daemon.child);
      expect((await daemon.exited).code).toBe(0);
    } finally {
      for (const { schema } of [a!, b!]) await fixture.admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
    }
  }, 90_000);

  it('an older version syncing a schema of the same name in another database is no reason to stop (advisory locks are per database)', async () => {
    const [a, b] = await collidingSchemas();
    const database = `wsm_lkkey_${randomBytes(4).toString('hex')}`;
    await fixture.admin.query(`CREATE DATABASE ${quoteId(database)}`);
    const url = new URL(testPgUrl!);
    url.pathname = `/${database}`;
    const elsewhere = new pg.Client({ connectionString: url.toString() });
    await elsewhere.connect();
    try {
      // An older wsmirror in the other database, on a schema named as b's.
      await elsewhere.query('SELECT pg_advisory_lock($1::int, hashtext($2))', [OLDER_LOCK_CLASS, b!.schema]);
      // Here b's older lock is held by a's daemon, whose schema's hashtext() meets b's: a wsmirror of this version.
      const daemon = startWsmirror(['run'], a!.env, { killAfterMs: 60_000 });
      await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
      const other = await runWsmirror(['sync'], b!.env, { killAfterMs: 30_000 });
      expect(other.code, other.stderr).toBe(0);
      await stopProcess(daemon.child);
      expect((await daemon.exited).code).toBe(0);
    } finally {
      await elsewhere.end();
      await fixture.admin.query(`DROP DATABASE ${quoteId(database)}`);
      for (const { schema } of [a!, b!]) await fixture.admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
    }
  }, 90_000);

  it('keeps an older version off the mirror it syncs, and keeps off one an older version syncs (an upgrade)', async () => {
    const { schema, env } = mirrorOf();
    const older = new pg.Client({ connectionString: testPgUrl });
    await older.connect();
    try {
      const olderLock = (fn: string) => older.query<{ taken: boolean }>(`SELECT ${fn}($1::int, hashtext($2)) AS taken`, [OLDER_LOCK_CLASS, schema]);
      const daemon = startWsmirror(['run'], env, { killAfterMs: 60_000 });
      await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
      // An older wsmirror takes its lock so: refused while this one runs.
      expect((await olderLock('pg_try_advisory_lock')).rows[0]!.taken).toBe(false);
      await stopProcess(daemon.child);
      expect((await daemon.exited).code).toBe(0);

      expect((await olderLock('pg_try_advisory_lock')).rows[0]!.taken).toBe(true);
      const refused = await runWsmirror(['sync'], env, { killAfterMs: 30_000 });
      expect(refused.code, refused.stderr).toBe(1);
      expect(refused.stderr).toMatch(/in use by another wsmirror process \(a run or sync of it: the session of pid \d+ .*, an older version of wsmirror\)/);
      await olderLock('pg_advisory_unlock');
    } finally {
      await older.end();
    }
  }, 90_000);
});
