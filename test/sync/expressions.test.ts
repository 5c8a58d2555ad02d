import { afterEach, expect, it } from 'vitest';
import { forEachDialect } from '../helpers/dialects.ts';
import { apiOf } from '../helpers/emulator.ts';
import { mirrorRows } from '../helpers/mirror-snapshot.ts';
import { recordsPath } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';

const label = (text: string) => ({ '': text });

forEachDialect('pull: fields computed by expressions', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('function fields arrive as read-only columns with their computed values; values behind canRead stay hidden', async () => {
    h = await startSyncHarness(dialect);
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [
      { name: 'amount', type: 'number', labels: label('Amount') },
      { name: 'public', type: 'boolean', labels: label('Public') },
      { name: 'secret', type: 'string', labels: label('Secret') },
      { name: 'total', type: 'function', labels: label('Total'), expression: 'amount * 2' },
      { name: 'band', type: 'function', labels: label('Band'), expression: 'if amount > 10 then "high" else "low" end' },
    ]);
    // A guard may name other fields only once they exist: set by a following update.
    await h.upstream.patchField('crm', 'deals', 'secret', { canRead: 'public = true' });
    const [open, hidden] = await h.upstream.createRecords('crm', 'deals', [
      { amount: 12.5, public: true, secret: 'shown' },
      { amount: 3, public: false, secret: 'kept upstream' },
    ]);

    await h.sync();

    const rows = await mirrorRows(h.tm, 'crm', 'deals');
    expect(rows.get(open!)).toMatchObject({ total: 25, band: 'high', secret: 'shown' });
    expect(rows.get(hidden!)).toMatchObject({ total: 6, band: 'low', secret: null });
    const flags = await h.tm.sql<{ field_name: string; is_read_only: unknown }>(
      `SELECT field_name, is_read_only FROM ${h.tm.table('_wsmirror_fields')} ORDER BY position`,
    );
    expect(flags.map((f) => [f.field_name, Boolean(Number(f.is_read_only))])).toEqual([
      ['amount', false], ['public', false], ['secret', false], ['total', true], ['band', true],
    ]);
    await h.expectConverged('crm', 'deals');

    // A change upstream that moves a computed value and reveals a hidden one reaches the mirror.
    const update = await apiOf(h.emu)('PATCH', recordsPath('crm', 'deals'), { records: [{ id: hidden, amount: 40, public: true }] });
    expect(update.status).toBe(200);
    await h.sync();
    expect((await mirrorRows(h.tm, 'crm', 'deals')).get(hidden!)).toMatchObject({ total: 80, band: 'high', secret: 'kept upstream' });
  });
});
