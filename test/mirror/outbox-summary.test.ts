import { expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import type { TestMirror } from '../helpers/dialects.ts';
import { field, module, sync, table, workspace } from './fixtures.ts';

const WS = workspace(
  module('m1', 'crm', [
    table('t1', 'deals', [field('fa', 'title', 'string')]),
    table('t2', 'accounts', [field('fb', 'name', 'string')]),
  ]),
);

async function addEntry(t: TestMirror, tableId: string, sqlTable: string, status: string): Promise<void> {
  await t.sql(
    `INSERT INTO ${t.table('_wsmirror_outbox')} ("table_id", "sql_table", "record_id", "operation", "column_name", "new_value", "status")
     VALUES ('${tableId}', '${sqlTable}', 1, 'update', 'title', '"x"', '${status}')`,
  );
}

forEachDialect('mirror outbox summary', ({ fresh }) => {
  it('is empty for an empty outbox', async () => {
    const t = await fresh();
    await sync(t.mirror, WS);
    expect(await t.mirror.outboxSummary()).toEqual([]);
  });

  it('counts entries per table (with the SQL name its entries keep) and status, ordered, with numbers (not bigint strings)', async () => {
    const t = await fresh();
    await sync(t.mirror, WS);
    for (const status of ['pending', 'pending', 'failed', 'conflict', 'pending']) await addEntry(t, 't1', 'crm__deals', status);
    await addEntry(t, 't2', 'crm__accounts', 'failed');
    // A table dropped from the mirror while it still had edits: still counted.
    await addEntry(t, 't9', 'crm__gone', 'conflict');
    expect(await t.mirror.outboxSummary()).toEqual([
      { tableId: 't1', sqlTable: 'crm__deals', status: 'conflict', count: 1 },
      { tableId: 't1', sqlTable: 'crm__deals', status: 'failed', count: 1 },
      { tableId: 't1', sqlTable: 'crm__deals', status: 'pending', count: 3 },
      { tableId: 't2', sqlTable: 'crm__accounts', status: 'failed', count: 1 },
      { tableId: 't9', sqlTable: 'crm__gone', status: 'conflict', count: 1 },
    ]);
  });

  it('refuses once the mirror is closed', async () => {
    const t = await fresh();
    const again = await t.reopen();
    await again.close();
    await expect(again.outboxSummary()).rejects.toThrow(/closed/);
  });
});
