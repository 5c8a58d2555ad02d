import { describe, expect, it } from 'vitest';
import { quoteId } from '../helpers/dialects.ts';
import { daemonsOnPostgres } from '../helpers/postgres-daemon-suite.ts';
import { startWsmirrorKilledAfterEach } from '../helpers/live-daemons.ts';
import { countLogLines, runWsmirror } from '../helpers/processes.ts';

/** Daemons a failed test left running are killed with it. */
const startWsmirror = startWsmirrorKilledAfterEach();

/**
 * A Postgres mirror's schema (or its catalog) dropped under a running daemon: every query of
 * every cycle would fail for ever. As for a SQLite file deleted, the next cycle fails naming the
 * schema, `run` exits 1 (the systemd unit starts it again), and a new run makes the mirror anew.
 */
describe('Postgres: the mirror schema dropped under a daemon (real processes)', () => {
  const { fixture, mirrorOf } = daemonsOnPostgres('wsm_gone');

  for (const [what, drop] of [
    ['the schema', (schema: string) => `DROP SCHEMA ${quoteId(schema)} CASCADE`],
    ['its catalog', (schema: string) => `DROP TABLE ${quoteId(schema)}."_wsmirror_meta"`],
  ] as const) {
    it(`${what} dropped: the next cycle fails naming the schema, run exits 1, and a new run makes the mirror again`, async () => {
      const { schema, env } = mirrorOf();
      const daemon = startWsmirror(['run'], env, { killAfterMs: 60_000 });
      await daemon.waitFor('a cycle', (stdout) => countLogLines(stdout, /^cycle done/) >= 1);
      await fixture.admin.query(drop(schema));

      const result = await daemon.exited;
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
      expect(result.stderr).toContain(`schema ${schema}`);
      expect(result.stderr).toMatch(/dropped while wsmirror had it open/);
      expect(countLogLines(result.stdout, /^sync cycle failed: .*dropped while wsmirror had it open/)).toBe(1);

      const again = await runWsmirror(['sync'], env, { killAfterMs: 30_000 });
      expect(again.code, again.stderr).toBe(0);
      const { rows } = await fixture.admin.query(`SELECT "name" FROM ${quoteId(schema)}."crm__people"`);
      expect(rows.map((r: { name: string }) => r.name)).toEqual(['Ada']);
    }, 90_000);
  }
});
