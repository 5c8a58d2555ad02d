import pg from 'pg';
import { expect, it } from 'vitest';
import { forEachDialect, testPgUrl, type TestMirror } from '../helpers/dialects.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

/**
 * A catalog read is one snapshot: its reads (tables, then fields…) never see a write that
 * commits between them, whoever writes (another wsmirror command, a user's SQL session). Each
 * test below commits one write that relabels the table and its field together while the read is
 * under way, and checks that the read shows both labels from one side of that write.
 */

const TABLE = '_wsmirror_tables';
const FIELDS = '_wsmirror_fields';

async function mirrorOfOneTable(t: TestMirror) {
  await sync(t.mirror, workspace(module('m1', 'crm', [table('t1', 'deals', [field('fa', 'title', 'string')])])));
}

function labelsRead(catalog: Awaited<ReturnType<TestMirror['mirror']['readCatalog']>>) {
  return { table: catalog.tables[0]!.label, field: catalog.fields[0]!.label };
}

forEachDialect('the catalog read', ({ dialect, fresh }) => {
  if (dialect === 'postgres') {
    it('reads tables and fields in one snapshot while another session commits between them', async () => {
      const t = await fresh();
      await mirrorOfOneTable(t);
      const writer = new pg.Client({ connectionString: testPgUrl });
      const watcher = new pg.Client({ connectionString: testPgUrl });
      await writer.connect();
      await watcher.connect();
      try {
        // The writer holds the fields table, so the read stops at its fields, after its tables.
        await writer.query(`BEGIN; LOCK TABLE ${t.table(FIELDS)} IN ACCESS EXCLUSIVE MODE`);
        const reading = t.mirror.readCatalog();
        for (let waited = 0; ; waited += 10) {
          const { rows } = await watcher.query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE $1`, [`%${t.pgSchema}%${FIELDS}%`],
          );
          if (rows.length > 0) break;
          if (waited > 10_000) throw new Error('the catalog read never reached the fields table');
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        await writer.query(`UPDATE ${t.table(TABLE)} SET label = 'deals, relabelled'`);
        await writer.query(`UPDATE ${t.table(FIELDS)} SET label = 'title, relabelled'`);
        await writer.query('COMMIT');
        // Both from before the write: the snapshot is the read's first statement's.
        expect(labelsRead(await reading)).toEqual({ table: 'deals label', field: 'title label' });
        expect(labelsRead(await t.mirror.readCatalog())).toEqual({ table: 'deals, relabelled', field: 'title, relabelled' });
      } finally {
        await writer.query('ROLLBACK').catch(() => {});
        await writer.end();
        await watcher.end();
      }
    });
  } else {
    it('reads tables and fields in one snapshot while another connection commits as often as it can', async () => {
      const t = await fresh();
      await mirrorOfOneTable(t);
      // The writer commits whenever this process is between two steps: any pause between the
      // read's statements lets a write land there.
      let done = false;
      let writes = 0;
      const reading = t.mirror.readCatalog().finally(() => {
        done = true;
      });
      while (!done && writes < 1_000) {
        writes += 1;
        await t.sql('BEGIN');
        await t.sql(`UPDATE ${t.table(TABLE)} SET label = ?`, [`v${writes}`]);
        await t.sql(`UPDATE ${t.table(FIELDS)} SET label = ?`, [`v${writes}`]);
        await t.sql('COMMIT');
      }
      const read = labelsRead(await reading);
      expect(read.field).toBe(read.table);
      expect(writes).toBeGreaterThan(0);
    });
  }
});
