import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { quoteId, testPgUrl } from '../helpers/dialects.ts';
import { daemonsOnPostgres } from '../helpers/postgres-daemon-suite.ts';
import { runWsmirror } from '../helpers/processes.ts';

/**
 * A statement the server cancels for its statement_timeout (set for wsmirror's role here) is
 * named as such, with the setting to raise: `check` reports it as a FAIL (exit 78, as any
 * check that fails), `sync` exits 1 (it may pass), neither calls the server unreachable.
 */
describe('Postgres: a statement_timeout that cancels wsmirror\'s statements (real processes)', () => {
  const { fixture, mirrorOf } = daemonsOnPostgres('wsm_stmt');

  it('check FAILs naming statement_timeout; sync exits 1 naming it', async () => {
    const role = `wsm_stmt_${randomBytes(4).toString('hex')}`;
    const { schema, env } = mirrorOf();
    const url = new URL(env.WSMIRROR_MIRROR_URL!);
    url.username = role;
    const asRole = { ...env, WSMIRROR_MIRROR_URL: url.toString() };
    await fixture.admin.query(`CREATE ROLE ${quoteId(role)} LOGIN`);
    const locker = new pg.Client({ connectionString: testPgUrl });
    await locker.connect();
    try {
      await fixture.admin.query(`CREATE SCHEMA ${quoteId(schema)} AUTHORIZATION ${quoteId(role)}`);
      const made = await runWsmirror(['sync'], asRole, { killAfterMs: 30_000 });
      expect(made.code, made.stderr).toBe(0);
      await fixture.admin.query(`ALTER ROLE ${quoteId(role)} SET statement_timeout = '300ms'`);

      // A session holding a table makes wsmirror's statements on it wait past the timeout.
      const holding = async (table: string, run: () => Promise<void>) => {
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE ${quoteId(schema)}.${quoteId(table)} IN ACCESS EXCLUSIVE MODE`);
        try {
          await run();
        } finally {
          await locker.query('ROLLBACK');
        }
      };
      await holding('crm__people', async () => {
        const check = await runWsmirror(['check'], asRole, { killAfterMs: 30_000 });
        expect(check.code, `${check.stdout}${check.stderr}`).toBe(78);
        expect(check.stdout).toMatch(/^FAIL mirror: .*canceling statement due to statement timeout.*statement_timeout/m);
      });
      await holding('_wsmirror_meta', async () => {
        const sync = await runWsmirror(['sync'], asRole, { killAfterMs: 30_000 });
        expect(sync.code, sync.stderr).toBe(1);
        expect(sync.stderr).toMatch(/canceling statement due to statement timeout.*statement_timeout/);
        expect(sync.stderr).not.toMatch(/cannot reach|configuration error/);
      });
    } finally {
      await locker.end();
      await fixture.admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await fixture.admin.query(`DROP ROLE ${quoteId(role)}`);
    }
  }, 90_000);
});
