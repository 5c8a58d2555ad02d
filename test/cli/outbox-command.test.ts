import { afterEach, describe, expect, it } from 'vitest';
import { SyncEngine } from '../../src/sync/index.ts';
import { forEachDialect, questionMarkSql } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { countLogLines, daemonEnv, mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { editsWaitingForARefusedRow } from '../helpers/waiting-edits.ts';

/** `wsmirror outbox` as a real process: list, retry and discard what the push left behind. */
forEachDialect('wsmirror outbox (real process)', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  it('lists failed edits with table, record, change and error; retry makes them pending; discard restores upstream', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [
      field('name', 'string'), field('status', 'choice', { options: [{ name: 'lead' }] }),
    ]);
    const [id] = await h.upstream.createRecords('crm', 'people', [{ name: 'Ada' }]);
    await h.sync();
    const table = h.tm.table((await catalogEntry(h.tm, 'crm', 'people'))!.sqlName);
    const p = dialect.dialect === 'postgres' ? '$1' : '?';
    await h.tm.sql(`UPDATE ${table} SET status = 'no-such-option' WHERE id = ${p}`, [Number(id)]);
    await h.sync();

    const env = mirrorEnv(h.tm);
    const listed = await runWsmirror(['outbox', '--json'], env);
    expect(listed.code, listed.stderr).toBe(0);
    const entries = JSON.parse(listed.stdout) as { entryId: number; table: string; recordId: number; fieldName: string; status: string; attempts: number; lastError: string }[];
    expect(entries).toEqual([expect.objectContaining({
      table: 'crm.people', recordId: Number(id), fieldName: 'status', status: 'failed', attempts: 1, lastError: expect.stringContaining('status'),
    })]);
    // Like every command, it warns about a WSMIRROR_* variable that configures nothing.
    const misspelt = await runWsmirror(['outbox', '--json'], { ...env, WSMIRROR_MIROR_URL: 'x' });
    expect(misspelt.stderr).toMatch(/WSMIRROR_MIROR_URL \(did you mean WSMIRROR_MIRROR_URL\?\)/);
    const text = await runWsmirror(['outbox', '--status', 'failed'], env);
    expect(text.stdout).toMatch(/crm\.people\s+\d+\s+status: null → no-such-option\s+failed\s+1/);
    expect((await runWsmirror(['outbox', '--status', 'pending'], env)).stdout).toBe('outbox: no entries\n');

    // Ids not in the outbox: a usage error naming them, and nothing changed, also beside one that is.
    const missing = entries[0]!.entryId + 99_999;
    for (const args of [['retry', String(missing)], ['retry', String(entries[0]!.entryId), String(missing)], ['discard', String(missing), String(missing + 1)]]) {
      const refused = await runWsmirror(['outbox', ...args], daemonEnv(h.emu, h.tm));
      expect({ code: refused.code, stdout: refused.stdout }, refused.stderr).toEqual({ code: 2, stdout: '' });
      expect(refused.stderr).toContain(`not in the outbox: ${args.slice(1).filter((a) => a !== String(entries[0]!.entryId)).join(', ')}`);
    }
    expect(JSON.parse((await runWsmirror(['outbox', '--json'], env)).stdout)).toEqual([expect.objectContaining({ status: 'failed', attempts: 1 })]);

    const retried = await runWsmirror(['outbox', 'retry', String(entries[0]!.entryId)], env);
    expect(retried.stdout).toBe('outbox: 1 entry pending again\n');
    expect(JSON.parse((await runWsmirror(['outbox', '--json'], env)).stdout)).toEqual([expect.objectContaining({ status: 'pending', attempts: 1 })]);
    // Refused again by the next sync: the cycle's line says so (the mirror is current: exit 0).
    const synced = await runWsmirror(['sync'], { ...daemonEnv(h.emu, h.tm), WSMIRROR_LOG_LEVEL: 'info' });
    expect(synced.code, synced.stderr).toBe(0);
    expect(countLogLines(synced.stdout, /^cycle done .*, 0 edits out; 1 edit failed \(wsmirror outbox\)$/), synced.stdout).toBe(1);
    expect(JSON.parse((await runWsmirror(['outbox', '--json'], env)).stdout)).toEqual([expect.objectContaining({ status: 'failed', attempts: 2 })]);
    expect((await runWsmirror(['outbox', 'retry', String(entries[0]!.entryId)], env)).code).toBe(0);

    expect((await runWsmirror(['outbox', 'discard', '--table', 'crm.nope'], daemonEnv(h.emu, h.tm))).code).toBe(2);
    const discarded = await runWsmirror(['outbox', 'discard', '--table', 'crm.people'], daemonEnv(h.emu, h.tm));
    expect(discarded.stdout, discarded.stderr).toBe('outbox: 1 entry discarded, 1 record restored from upstream\n');
    expect(await h.tm.sql(`SELECT status FROM ${table}`)).toEqual([{ status: null }]);
    expect((await runWsmirror(['outbox'], env)).stdout).toBe('outbox: no entries\n');
  }, 60_000);
  it('retries on a mirror an older wsmirror made (catalog layout 6): the catalog is brought up to date first', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [field('status', 'choice', { options: [{ name: 'lead' }] })]);
    const [id] = await h.upstream.createRecords('crm', 'people', [{}]);
    await h.sync();
    const table = h.tm.table((await catalogEntry(h.tm, 'crm', 'people'))!.sqlName);
    const p = dialect.dialect === 'postgres' ? '$1' : '?';
    await h.tm.sql(`UPDATE ${table} SET status = 'no-such-option' WHERE id = ${p}`, [Number(id)]);
    await h.sync();
    await h.tm.sql(`ALTER TABLE ${h.tm.table('_wsmirror_outbox')} DROP COLUMN "retried_at"`);
    await h.tm.sql(`UPDATE ${h.tm.table('_wsmirror_meta')} SET "value" = '6' WHERE "key" = 'catalog_version'`);
    const [entry] = await h.tm.sql<{ entry_id: unknown }>(`SELECT entry_id FROM ${h.tm.table('_wsmirror_outbox')}`);
    const retried = await runWsmirror(['outbox', 'retry', String(entry!.entry_id)], mirrorEnv(h.tm));
    expect({ code: retried.code, stdout: retried.stdout }, retried.stderr).toEqual({ code: 0, stdout: 'outbox: 1 entry pending again\n' });
  }, 60_000);

  it('lists a row inserted here whose table left the mirror with the values its entry keeps', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    await h.sync();
    const table = h.tm.table((await catalogEntry(h.tm, 'crm', 'people'))!.sqlName);
    await h.tm.sql(`INSERT INTO ${table} (name) VALUES ('Bea')`);
    const narrowed = new SyncEngine({ client: h.client, mirror: h.tm.mirror, options: { lookbackMs: 0, tables: { include: ['crm.nobody'] } } });
    await narrowed.runCycle();
    const listed = await runWsmirror(['outbox'], mirrorEnv(h.tm));
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/insert \{"name":"Bea"\}\s+failed/);
  }, 60_000);

  it('names the edits of a table deleted upstream by its SQL name, and selects them by it or by the old module.table', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('chaos');
    await h.upstream.createTable('chaos', 'del_s', { hasHistory: true }, [field('name', 'string')]);
    await h.upstream.createTable('chaos', 'kept', { hasHistory: true }, [field('name', 'string')]);
    const ids = await h.upstream.createRecords('chaos', 'del_s', [{ name: 'Ada' }, { name: 'Bea' }]);
    await h.sync();
    const gone = (await catalogEntry(h.tm, 'chaos', 'del_s'))!;
    const p = dialect.dialect === 'postgres' ? '$1' : '?';
    for (const id of ids) await h.tm.sql(`UPDATE ${h.tm.table(gone.sqlName)} SET name = 'x' WHERE id = ${p}`, [Number(id)]);
    await h.upstream.deleteTable('chaos', 'del_s');
    await h.sync();
    await h.sync();
    const env = mirrorEnv(h.tm);
    type Listed = { entryId: number; table: string; tableId: string; sqlTable: string; status: string; lastError: string };
    const list = async (...args: string[]) => {
      const res = await runWsmirror(['outbox', '--json', ...args], env);
      expect(res.code, res.stderr).toBe(0);
      return JSON.parse(res.stdout) as Listed[];
    };
    const listed = await list();
    expect(listed.map((e) => [e.table, e.sqlTable, e.status])).toEqual([[gone.sqlName, gone.sqlName, 'failed'], [gone.sqlName, gone.sqlName, 'failed']]);
    expect(listed[0]!.lastError).toContain(`table ${gone.sqlName} is no longer mirrored`);
    expect(listed[0]!.lastError).not.toContain(gone.tableId);
    expect((await runWsmirror(['outbox', '--status', 'failed'], env)).stdout).toMatch(new RegExp(`^ *${listed[0]!.entryId} +${gone.sqlName} `, 'm'));
    // Selected by its SQL name, by the module.table it had, or by its id; another name is refused.
    for (const name of [gone.sqlName, 'chaos.del_s', gone.tableId]) expect(await list('--table', name)).toHaveLength(2);
    const refused = await runWsmirror(['outbox', '--table', 'chaos.nope'], env);
    expect({ code: refused.code, stderr: refused.stderr }).toEqual({ code: 2, stderr: expect.stringContaining('"chaos.nope"') });
    const retried = await runWsmirror(['outbox', 'retry', '--table', 'chaos.del_s'], env);
    expect(retried.stdout, retried.stderr).toBe('outbox: 2 entries pending again\n');
    const discarded = await runWsmirror(['outbox', 'discard', '--table', gone.sqlName], daemonEnv(h.emu, h.tm));
    expect(discarded.stdout, discarded.stderr).toBe('outbox: 2 entries discarded, 0 records restored from upstream\n');
  }, 60_000);

  it('selects the edits of a table deleted upstream by the module.table it had also when its SQL name was disambiguated', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    // a__b.c and a.b__c both want the SQL name a__b__c: the later one gets a suffix.
    await h.upstream.createModule('a__b');
    await h.upstream.createModule('a');
    await h.upstream.createTable('a__b', 'c', { hasHistory: true }, [field('name', 'string')]);
    await h.upstream.createTable('a', 'b__c', { hasHistory: true }, [field('name', 'string')]);
    const [id] = await h.upstream.createRecords('a', 'b__c', [{ name: 'Ada' }]);
    await h.sync();
    const gone = (await catalogEntry(h.tm, 'a', 'b__c'))!;
    expect(gone.sqlName).not.toBe('a__b__c');
    const p = dialect.dialect === 'postgres' ? '$1' : '?';
    await h.tm.sql(`UPDATE ${h.tm.table(gone.sqlName)} SET name = 'x' WHERE id = ${p}`, [Number(id)]);
    await h.upstream.deleteTable('a', 'b__c');
    await h.sync();
    await h.sync();
    const env = mirrorEnv(h.tm);
    const listed = await runWsmirror(['outbox', '--json', '--table', 'a.b__c'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { table: string }[]).map((e) => e.table)).toEqual([gone.sqlName]);
    // The table still mirrored under the plain name is not taken for it.
    expect(JSON.parse((await runWsmirror(['outbox', '--json', '--table', 'a__b.c'], env)).stdout)).toEqual([]);
  }, 60_000);

  it('discards a refused local insert: its row goes, nothing is read back, and the command says so', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [
      field('name', 'string'), field('status', 'choice', { options: [{ name: 'lead' }] }),
    ]);
    await h.sync();
    const table = h.tm.table((await catalogEntry(h.tm, 'crm', 'people'))!.sqlName);
    await h.tm.sql(`INSERT INTO ${table} (name, status) VALUES ('Ada', 'no-such-option')`);
    await h.sync();
    const env = mirrorEnv(h.tm);
    const [entry] = JSON.parse((await runWsmirror(['outbox', '--json'], env)).stdout) as { entryId: number; status: string; recordId: number }[];
    expect(entry).toMatchObject({ status: 'failed' });
    expect(entry!.recordId).toBeLessThan(0);
    const discarded = await runWsmirror(['outbox', 'discard', String(entry!.entryId)], daemonEnv(h.emu, h.tm));
    expect({ code: discarded.code, stdout: discarded.stdout, stderr: discarded.stderr })
      .toEqual({ code: 0, stdout: 'outbox: 1 entry discarded, 0 records restored from upstream, 1 row inserted locally removed\n', stderr: '' });
    expect(await h.tm.sql(`SELECT name FROM ${table}`)).toEqual([]);
    expect(await h.upstream.allRecords('crm', 'people')).toEqual([]);
  }, 60_000);

  it('names, for each pending edit that waits for another row\'s create, the row it waits for; an edit of that row goes with its create once retried', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    const { company, deal, other, tables } = await editsWaitingForARefusedRow(h);
    const env = mirrorEnv(h.tm);
    type Listed = { entryId: number; table: string; recordId: number; operation: string; status: string; waitsFor: { table: string; tableId: string; recordId: number } | null };
    const list = async () => JSON.parse((await runWsmirror(['outbox', '--json'], env)).stdout) as Listed[];
    const companies = (await catalogEntry(h.tm, 'crm', 'companies'))!.tableId;
    const onCompany = { table: 'crm.companies', tableId: companies, recordId: company.id };
    const listed = await list();
    expect(listed.map((e) => [e.table, e.recordId, e.operation, e.status, e.waitsFor])).toEqual([
      ['crm.companies', company.id, 'insert', 'failed', null],
      ['crm.deals', expect.any(Number), 'insert', 'pending', onCompany],
      ['crm.deals', deal, 'update', 'pending', onCompany],
      ['crm.companies', company.id, 'update', 'pending', onCompany],
      ['crm.deals', other, 'update', 'pending', null],
    ]);
    expect(listed[0]!.entryId).toBe(company.insertEntryId);

    const text = (await runWsmirror(['outbox', '--status', 'pending'], env)).stdout;
    expect(text.split('\n')[0]).toMatch(/^ID +TABLE +RECORD +CHANGE +STATUS +ATTEMPTS +NEXT ATTEMPT +WAITS FOR +LAST ERROR$/);
    const line = text.split('\n').find((l) => new RegExp(`^ *${listed[2]!.entryId} `).test(l))!;
    expect(line).toMatch(new RegExp(`crm\\.deals +${deal} +company: null → ${company.id} +pending .* crm\\.companies ${company.id} +references row ${company.id} of crm\\.companies`));
    // Nothing waits: no such column.
    expect((await runWsmirror(['outbox', '--status', 'failed'], env)).stdout).not.toContain('WAITS FOR');

    // Fixed and retried, the company's insert is pending again: its own edit goes with its
    // create, and the deals' edits wait for it still, until it is made.
    await questionMarkSql(h.tm)(`UPDATE ${tables.companies} SET stage = NULL WHERE id = ?`, [company.id]);
    expect((await runWsmirror(['outbox', 'retry', String(company.insertEntryId)], env)).code).toBe(0);
    expect((await list()).filter((e) => e.waitsFor !== null).map((e) => [e.table, e.operation])).toEqual([
      ['crm.deals', 'insert'], ['crm.deals', 'update'],
    ]);
    await h.sync();
    expect(await list()).toEqual([]);
  }, 60_000);
});

describe('wsmirror outbox --help (real process)', () => {
  it('says that outbox alone lists, and shows the options of the listing', async () => {
    const res = await runWsmirror(['outbox', '--help'], {});
    expect(res.code, res.stderr).toBe(0);
    const help = res.stdout.replace(/\s+/g, ' ');
    expect(help).toContain('wsmirror outbox alone runs wsmirror outbox list');
    for (const option of ['--status <status>', '--table <module.table>', '--json', '--config <file>']) expect(help).toContain(option);
    // The subcommands are still listed.
    for (const command of ['list [options]', 'retry [options] [ids...]', 'discard [options] [ids...]']) expect(help).toContain(command);
  });
});
