import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { quoteId } from '../helpers/dialects.ts';
import { daemonsOnPostgres } from '../helpers/postgres-daemon-suite.ts';
import { runWsmirror } from '../helpers/processes.ts';

/**
 * `wsmirror check` says when the Postgres sessions it gets are read-only (a role or database with
 * default_transaction_read_only on, or a hot standby): every write of a sync would fail there.
 */
describe('wsmirror check: a read-only Postgres target (real processes)', () => {
  const { fixture, mirrorOf } = daemonsOnPostgres('wsm_ro');

  it('FAILs a role whose sessions are read-only, for a mirror made and one not made yet, naming the setting', async () => {
    const role = `wsm_ro_${randomBytes(4).toString('hex')}`;
    const made = mirrorOf();
    const notYet = mirrorOf();
    await fixture.admin.query(`CREATE ROLE ${quoteId(role)} LOGIN`);
    try {
      await fixture.admin.query(`CREATE SCHEMA ${quoteId(made.schema)} AUTHORIZATION ${quoteId(role)}`);
      await fixture.admin.query(`CREATE SCHEMA ${quoteId(notYet.schema)} AUTHORIZATION ${quoteId(role)}`);
      const asRole = (env: Record<string, string>) => {
        const url = new URL(env.WSMIRROR_MIRROR_URL!);
        url.username = role;
        return { ...env, WSMIRROR_MIRROR_URL: url.toString() };
      };
      const sync = await runWsmirror(['sync'], asRole(made.env), { killAfterMs: 30_000 });
      expect(sync.code, sync.stderr).toBe(0);
      const before = await runWsmirror(['check'], asRole(made.env), { killAfterMs: 30_000 });
      expect(before.code, before.stdout).toBe(0);

      await fixture.admin.query(`ALTER ROLE ${quoteId(role)} SET default_transaction_read_only = on`);
      for (const { env } of [made, notYet]) {
        const res = await runWsmirror(['check'], asRole(env), { killAfterMs: 30_000 });
        expect(res.code, res.stdout).toBe(78);
        expect(res.stdout).toMatch(/^FAIL mirror: .*sessions of role wsm_ro_\w+ are read-only \(transaction_read_only is on: default_transaction_read_only is set for the role, the database or in the URL\): a sync could write nothing/m);
      }
    } finally {
      for (const { schema } of [made, notYet]) await fixture.admin.query(`DROP SCHEMA IF EXISTS ${quoteId(schema)} CASCADE`);
      await fixture.admin.query(`DROP ROLE ${quoteId(role)}`);
    }
  }, 60_000);
});
