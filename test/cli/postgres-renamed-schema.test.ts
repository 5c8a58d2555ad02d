import { describe, expect, it } from 'vitest';
import { quoteId } from '../helpers/dialects.ts';
import { daemonsOnPostgres } from '../helpers/postgres-daemon-suite.ts';
import { runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A mirror whose schema was renamed (`ALTER SCHEMA … RENAME`, or a dump restored under another
 * name and renamed), then opened under its new name: its capture functions named the old one.
 */
describe('Postgres: a mirror opened under a new schema name (real processes)', () => {
  const { fixture, mirrorOf } = daemonsOnPostgres('wsm_renamed');

  /** The capture functions of `schema`, by oid: made again, they have new ones. */
  const captureFunctions = async (schema: string) => (await fixture.admin.query<{ oid: number }>(
    `SELECT p.oid::int AS oid FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 AND p.proname LIKE '\\_wsmirror\\_capture\\_%' ORDER BY p.oid`, [schema],
  )).rows.map((r) => r.oid);

  it('captures local edits again: the capture functions are made again for the new name, once', async () => {
    const { schema, env } = mirrorOf();
    expect((await runWsmirror(['sync'], env)).code).toBe(0);
    // A mirror opened under its own name keeps them.
    const made = await captureFunctions(schema);
    expect(made).toHaveLength(5);
    expect((await runWsmirror(['sync'], env)).code).toBe(0);
    expect(await captureFunctions(schema)).toEqual(made);
    // Quotes of both kinds: the functions name the schema quoted, in a string literal.
    const renamed = `${schema}_r'"`;
    const people = `${quoteId(renamed)}."crm__people"`;
    try {
      await fixture.admin.query(`ALTER SCHEMA ${quoteId(schema)} RENAME TO ${quoteId(renamed)}`);
      const renamedEnv = { ...env, WSMIRROR_PG_SCHEMA: renamed };
      // check writes nothing: it says what the next sync does.
      const check = await runWsmirror(['check'], renamedEnv);
      expect(check.code, check.stdout).toBe(0);
      expect(check.stdout).toContain('note the next sync makes the capture functions again');
      expect(check.stdout).toContain('they name the mirror\'s schema under another name');
      const opened = await runWsmirror(['sync'], renamedEnv);
      expect(opened.code, opened.stderr).toBe(0);
      const remade = await captureFunctions(renamed);
      expect(remade).toHaveLength(5);
      expect(remade.some((oid) => made.includes(oid))).toBe(false);

      await fixture.admin.query(`UPDATE ${people} SET "name" = 'Ada Lovelace'`);
      await fixture.admin.query(`INSERT INTO ${people} ("name") VALUES ('Grace')`);
      const pushed = await runWsmirror(['sync'], renamedEnv);
      expect(pushed.code, pushed.stderr).toBe(0);
      const names = (await new UpstreamWorkspace(fixture.emu).allRecords('crm', 'people')).map((r) => r.values['name']);
      expect(names.sort()).toEqual(['Ada Lovelace', 'Grace']);
      expect((await fixture.admin.query(`SELECT count(*)::int AS n FROM ${quoteId(renamed)}."_wsmirror_outbox"`)).rows[0].n).toBe(0);
      expect(await captureFunctions(renamed)).toEqual(remade);
    } finally {
      await fixture.admin.query(`DROP SCHEMA IF EXISTS ${quoteId(renamed)} CASCADE`);
    }
  }, 90_000);
});
