import { afterEach, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import { SyncEngine, cycleProblems, type SyncOptions } from '../../src/sync/index.ts';
import { discardOutbox, listOutbox, retryOutbox } from '../../src/sync/push/outbox-admin.ts';
import { forEachDialect, questionMarkSql, type TestMirror } from '../helpers/dialects.ts';
import { catalogEntry } from '../helpers/mirror-snapshot.ts';
import { field } from '../helpers/schema.ts';
import { startSyncHarness, type SyncHarness } from '../helpers/sync-harness.ts';
import { upstreamWith } from '../helpers/upstream-overrides.ts';

/**
 * DESIGN §4.7-9 end to end: edits made with plain SQL on a separate connection (as a BI tool or
 * psql would) reach upstream through the real mirror's triggers and outbox, the engine's push
 * step and the emulator.
 */

async function sqlTable(h: SyncHarness, module: string, table: string): Promise<string> {
  const entry = await catalogEntry(h.tm, module, table);
  if (!entry) throw new Error(`${module}.${table} is not mirrored`);
  return h.tm.table(entry.sqlName);
}

interface OutboxRow {
  record_id: number | string;
  operation: string;
  column_name: string | null;
  status: string;
  attempts: number | string;
  last_error: string | null;
}

async function outbox(h: SyncHarness): Promise<OutboxRow[]> {
  return h.tm.sql<OutboxRow>(`SELECT record_id, operation, column_name, status, attempts, last_error FROM ${h.tm.table('_wsmirror_outbox')} ORDER BY entry_id`);
}

forEachDialect('push end to end', (dialect) => {
  let h: SyncHarness;
  afterEach(async () => h?.close());

  async function people(options: Partial<SyncOptions> = {}, hasHistory = true) {
    h = await startSyncHarness(dialect, { lookbackMs: 0, ...options });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory }, [
      field('name', 'string'), field('age', 'number'), field('email', 'string'),
      field('status', 'choice', { options: [{ name: 'lead' }, { name: 'customer' }] }),
    ]);
  }

  // The client waits out no Retry-After above its cap (retryAfterMaxMs, 2 minutes): nor does
  // the push put an edit off past it, however far upstream says (years; past the dates a
  // timestamp can hold).
  it.each(['999999999', '99999999999999'])('a push answered 429 with Retry-After: %s tries the edit again within the client\'s cap', async (seconds) => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 }, { proxy: true, maxRetries: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    const [id] = await h.upstream.createRecords('crm', 'people', [{ name: 'a' }]);
    await h.sync();
    const people = await sqlTable(h, 'crm', 'people');
    await questionMarkSql(h.tm)(`UPDATE ${people} SET name = ? WHERE id = ?`, ['b', Number(id)]);
    h.proxy!.rewrite = (path, _body, { method }) => (method !== 'GET' && path.includes('/records')
      ? { status: 429, body: JSON.stringify({ error: { message: 'slow down' } }), headers: { 'retry-after': seconds } } : undefined);
    const before = Date.now();
    const report = await h.engine.runCycle();
    expect(cycleProblems(report).join('\n')).not.toMatch(/Invalid time value/);
    const [entry] = await h.tm.sql<{ status: string; attempts: number | string; next_attempt_at: unknown }>(
      `SELECT status, attempts, next_attempt_at FROM ${h.tm.table('_wsmirror_outbox')}`,
    );
    expect(entry).toMatchObject({ status: 'pending' });
    expect(Number(entry!.attempts)).toBe(1);
    const next = entry!.next_attempt_at instanceof Date ? entry!.next_attempt_at.getTime() : Date.parse(String(entry!.next_attempt_at));
    expect(next).toBeGreaterThanOrEqual(before + 120_000 - 1000);
    expect(next).toBeLessThanOrEqual(Date.now() + 120_000 + 1000);
  });

  it('sends each field type edited in SQL to upstream in the shape the API takes', async () => {
    h = await startSyncHarness(dialect, { lookbackMs: 0 });
    await h.upstream.createModule('crm');
    await h.upstream.createTable('crm', 'companies', { hasHistory: true }, [field('name', 'string')]);
    await h.upstream.createTable('crm', 'deals', { hasHistory: true }, [
      field('title', 'string'), field('amount', 'number'), field('active', 'boolean'), field('due', 'date'),
      field('seen_at', 'timestamp'), field('tags', 'multi', { options: [{ name: 'red' }, { name: 'blue' }] }),
      field('stage', 'choice', { options: [{ name: 'open' }, { name: 'won' }] }),
      field('company', 'reference', { refTableName: 'companies' }), field('meeting', 'appointment'),
      field('glyph', 'icon'), field('tint', 'color'), field('starts', 'time'), field('notes', 'html'),
      field('assignee', 'user'),
    ]);
    const [acme] = await h.upstream.createRecords('crm', 'companies', [{ name: 'Acme' }]);
    const [deal] = await h.upstream.createRecords('crm', 'deals', [{ title: 'old', amount: 1, active: true, glyph: 'star' }]);
    await h.sync();
    const fields = (await h.upstream.getTable('crm', 'deals')).fields as { name: string; options?: { id: string; name: string }[] }[];
    const option = (f: string, name: string) => fields.find((x) => x.name === f)!.options!.find((o) => o.name === name)!.id;
    const pg = dialect.dialect === 'postgres';
    const sql = questionMarkSql(h.tm);
    const deals = await sqlTable(h, 'crm', 'deals');
    const tags = JSON.stringify([option('tags', 'blue'), option('tags', 'red')]);
    await sql(
      `UPDATE ${deals} SET title = ?, amount = ?, active = ?, due = ?, seen_at = ?, tags = ?, stage = ?, company = ?,
        meeting = ?, glyph = ?, tint = ?, starts = ?, notes = ?, assignee = ? WHERE id = ?`,
      [
        'new', 12.5, pg ? 'false' : 0, '2026-03-01', '2026-03-01T10:00:00.000Z', tags, option('stage', 'won'), Number(acme),
        '[2026-03-01T09:00:00.000Z,2026-03-01T10:00:00.000Z)', 'rocket', '#aabbcc', '09:30', '<b>hi</b>', 'u42', Number(deal),
      ],
    );
    expect((await outbox(h)).length).toBeGreaterThan(0);
    await h.sync();
    const [record] = await h.upstream.allRecords('crm', 'deals');
    expect(record!.values).toEqual({
      title: 'new', amount: 12.5, active: false, due: '2026-03-01', seen_at: '2026-03-01T10:00:00.000Z',
      tags: JSON.parse(tags), stage: option('stage', 'won'), company: Number(acme),
      meeting: '[2026-03-01T09:00:00.000Z,2026-03-01T10:00:00.000Z)', glyph: 'rocket', tint: '#aabbcc',
      starts: '09:30', notes: '<b>hi</b>', assignee: 'u42',
    });
    expect(await outbox(h)).toEqual([]);
    await h.expectConverged('crm', 'deals');
  });

  it('pushes appointments edited in SQL as [start,end): on Postgres a tstzrange, edited with range functions in any session\'s zone', async () => {
    // `manual` checks each edited field's value before the edit against upstream: a captured
    // range read back wrong would show as a conflict.
    h = await startSyncHarness(dialect, { lookbackMs: 0, conflictPolicy: 'manual' });
    await h.upstream.createModule('cal');
    await h.upstream.createTable('cal', 'events', { hasHistory: true }, [field('title', 'string'), field('meeting', 'appointment')]);
    const meeting = (day: string, from: string, to: string) => `[2026-${day}T${from}:00.000Z,2026-${day}T${to}:00.000Z)`;
    const [moved, point, emptied, opened] = await h.upstream.createRecords('cal', 'events', [
      { title: 'moved', meeting: meeting('01-31', '09:00', '10:30') },
      { title: 'point', meeting: meeting('01-31', '12:00', '12:00') },
      { title: 'emptied', meeting: meeting('02-01', '09:00', '10:00') },
      { title: 'opened', meeting: meeting('02-02', '09:00', '10:00') },
    ]);
    await h.sync();
    const pg = dialect.dialect === 'postgres';
    const sql = questionMarkSql(h.tm);
    const events = await sqlTable(h, 'cal', 'events');
    if (pg) {
      const [pulled] = await sql(`SELECT pg_typeof(meeting)::text AS type, upper(meeting) - lower(meeting) = interval '90 minutes' AS long FROM ${events} WHERE id = ?`, [Number(moved)]);
      expect(pulled).toEqual({ type: 'tstzrange', long: true });
      // The point came as [t,t): Postgres would make that the empty range, the mirror keeps t.
      const [kept] = await sql(`SELECT isempty(meeting) AS empty, lower(meeting) = '2026-01-31T12:00:00Z'::timestamptz AS at FROM ${events} WHERE id = ?`, [Number(point)]);
      expect(kept).toEqual({ empty: false, at: true });
      // Another session's zone and date style print ranges otherwise: the push does not depend on them.
      await sql(`SET TimeZone = 'Asia/Kolkata'`);
      await sql(`SET DateStyle = 'SQL, DMY'`);
      await sql(`UPDATE ${events} SET meeting = tstzrange(lower(meeting) + interval '1 hour', upper(meeting) + interval '1 hour') WHERE id = ?`, [Number(moved)]);
      await sql(`UPDATE ${events} SET meeting = tstzrange(lower(meeting) + interval '1 hour', lower(meeting) + interval '1 hour', '[]') WHERE id = ?`, [Number(point)]);
      await sql(`UPDATE ${events} SET meeting = 'empty' WHERE id = ?`, [Number(emptied)]);
      await sql(`UPDATE ${events} SET meeting = tstzrange(lower(meeting), NULL) WHERE id = ?`, [Number(opened)]);
    } else {
      const set = (id: unknown, value: string | null) => sql(`UPDATE ${events} SET meeting = ? WHERE id = ?`, [value, Number(id)]);
      await set(moved, meeting('01-31', '10:00', '11:30'));
      await set(point, meeting('01-31', '13:00', '13:00'));
      await set(emptied, null);
      await set(opened, '[2026-02-02T09:00:00.000Z,)');
    }
    await h.sync();
    const upstream = new Map((await h.upstream.allRecords('cal', 'events')).map((r) => [r.id, r.values['meeting']]));
    expect(upstream.get(moved!)).toBe(meeting('01-31', '10:00', '11:30'));
    expect(upstream.get(point!)).toBe(meeting('01-31', '13:00', '13:00'));
    // An empty range holds no appointment: it clears the field.
    expect(upstream.get(emptied!)).toBeNull();
    // An open bound is no appointment the API takes: sent as stored, refused upstream, kept as failed.
    expect(upstream.get(opened!)).toBe(meeting('02-02', '09:00', '10:00'));
    const left = await outbox(h);
    expect(left.map((e) => [Number(e.record_id), e.column_name, e.status])).toEqual([[Number(opened), 'meeting', 'failed']]);
    expect(left[0]!.last_error).toMatch(/meeting/);
    if (pg) {
      const [back] = await sql(`SELECT meeting = '[2026-01-31T10:00:00Z,2026-01-31T11:30:00Z)'::tstzrange AS same FROM ${events} WHERE id = ?`, [Number(moved)]);
      expect(back).toEqual({ same: true });
    }
  });

  it('round-trips inserts and deletes; an inserted row takes its upstream id', async () => {
    await people();
    const [gone] = await h.upstream.createRecords('crm', 'people', [{ name: 'gone' }]);
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const table = await sqlTable(h, 'crm', 'people');
    // A plain INSERT: no id, no _synced_at (docs/mirror.md, "Writing to the mirror").
    await sql(`INSERT INTO ${table} (name, age) VALUES (?, ?)`, ['Ada', 36]);
    await sql(`DELETE FROM ${table} WHERE id = ?`, [Number(gone)]);
    const [local] = await sql<{ id: number | string }>(`SELECT id FROM ${table} WHERE name = ?`, ['Ada']);
    expect(Number(local!.id)).toBeLessThan(0);
    await h.sync();
    const upstream = await h.upstream.allRecords('crm', 'people');
    expect(upstream.map((r) => r.values)).toEqual([{ name: 'Ada', age: 36, email: null, status: null }]);
    const [after] = await sql<{ id: number | string }>(`SELECT id FROM ${table} WHERE name = ?`, ['Ada']);
    expect(Number(after!.id)).toBe(Number(upstream[0]!.id));
    expect(await outbox(h)).toEqual([]);
    await h.expectConverged('crm', 'people');
  });

  it('pushes 97 of 100 edits and marks the 3 invalid ones failed with the upstream message (each record\'s valid column too)', async () => {
    await people();
    const ids = await h.upstream.createRecords('crm', 'people', Array.from({ length: 100 }, (_, i) => ({ name: `p${i}` })));
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const table = await sqlTable(h, 'crm', 'people');
    const bad = new Set([3, 42, 99]);
    for (const [i, id] of ids.entries()) {
      // A choice value that is no option of the field: upstream refuses it.
      await sql(`UPDATE ${table} SET status = ?, age = ? WHERE id = ?`, [bad.has(i) ? 'no-such-option' : null, i, Number(id)]);
    }
    await h.sync();
    const failed = (await outbox(h)).filter((e) => e.status === 'failed');
    expect(failed.map((e) => Number(e.record_id)).sort((a, b) => a - b)).toEqual([...bad].map((i) => Number(ids[i])).sort((a, b) => a - b));
    for (const e of failed) expect([e.column_name, e.last_error]).toEqual(['status', expect.stringMatching(/status/)]);
    // The refused records' other column (age) went through as well: each column is an edit.
    const upstream = await h.upstream.allRecords('crm', 'people');
    expect(upstream.filter((r) => typeof r.values.age === 'number')).toHaveLength(100);
    expect(await outbox(h)).toHaveLength(3);
  });

  it('a record whose edit upstream refuses for one field still gets its other fields; only that field fails', async () => {
    await people();
    const [id] = await h.upstream.createRecords('crm', 'people', [{ name: 'Ann', age: 30 }]);
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const table = await sqlTable(h, 'crm', 'people');
    await sql(`UPDATE ${table} SET status = ?, name = ?, age = ?, email = ? WHERE id = ?`, ['no-such-option', 'Ann B', 31, 'ann@example.com', Number(id)]);
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people'))[0]!.values).toEqual({ name: 'Ann B', age: 31, email: 'ann@example.com', status: null });
    const left = await outbox(h);
    expect(left.map((e) => [e.column_name, e.status])).toEqual([['status', 'failed']]);
    expect(left[0]!.last_error).toMatch(/status/);
  });

  it.skipIf(dialect.dialect !== 'sqlite')('REPLACE naming a row is an update of it: a pulled row keeps its record, a row inserted here is created once, with or without recursive_triggers', async () => {
    await people();
    const [ann, bob] = await h.upstream.createRecords('crm', 'people', [{ name: 'Ann', age: 30 }, { name: 'Bob', age: 40, email: 'bob@example.com' }]);
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const table = await sqlTable(h, 'crm', 'people');
    await sql(`INSERT INTO ${table} (name, age) VALUES ('RN1', 1)`);
    const [local] = await sql<{ id: number }>(`SELECT id FROM ${table} WHERE name = 'RN1'`);
    await sql(`REPLACE INTO ${table} (id, name, age) VALUES (?, 'RN2', 2)`, [local!.id]);
    await sql(`REPLACE INTO ${table} (id, name, age) VALUES (?, 'Ann-R', 1)`, [Number(ann)]);
    await sql('PRAGMA recursive_triggers = ON');
    await sql(`INSERT OR REPLACE INTO ${table} (id, name, age, email) VALUES (?, 'Bob-R', 41, 'bob@example.com')`, [Number(bob)]);
    await sql('PRAGMA recursive_triggers = OFF');
    await h.sync();
    const upstream = await h.upstream.allRecords('crm', 'people');
    expect(upstream.map((r) => [r.id, r.values])).toEqual([
      [ann, { name: 'Ann-R', age: 1, email: null, status: null }],
      [bob, { name: 'Bob-R', age: 41, email: 'bob@example.com', status: null }],
      [expect.anything(), { name: 'RN2', age: 2, email: null, status: null }],
    ]);
    expect(await outbox(h)).toEqual([]);
    await h.expectConverged('crm', 'people');
  });

  it.skipIf(dialect.dialect !== 'sqlite')('a pulled row REPLACE rewrote, pushed and then deleted upstream, is deleted by a scan that resumes past it', async () => {
    await people({}, false);
    const ids = await h.upstream.createRecords('crm', 'people', Array.from({ length: 150 }, (_, i) => ({ name: `p${i}`, age: i })));
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const table = await sqlTable(h, 'crm', 'people');
    const gone = Number(ids[3]);
    const syncedAt = async () => (await sql<{ _synced_at: string | null }>(`SELECT _synced_at FROM ${table} WHERE id = ?`, [gone]))[0]?._synced_at;
    const pulledAt = await syncedAt();
    await sql(`REPLACE INTO ${table} (id, name, age) VALUES (?, 'Replaced', 3)`, [gone]);
    // A cycle with no scan due (as `wsmirror run` between scans) pushes the edit and leaves the row.
    expect((await h.engine.runCycle()).ok).toBe(true);
    expect(await outbox(h)).toEqual([]);
    expect(await syncedAt()).toBe(pulledAt);
    await h.upstream.deleteRecords('crm', 'people', [ids[3]!]);
    // A scan stopped after its first page, past the deleted record, before it looked it up.
    const firstPageOnly = upstreamWith(h.client, {
      iterateRecords: (...args) => (async function* () {
        for await (const page of h.client.iterateRecords(...args)) {
          yield page;
          throw new UpstreamError({ endpoint: 'listRecords', method: 'GET', path: '/records' }, 503, 'unavailable', { attempts: 1 });
        }
      })(),
    });
    const stopped = await new SyncEngine({ client: firstPageOnly, mirror: h.tm.mirror, options: { lookbackMs: 0 } }).runCycle({ forceFullScan: true });
    expect(cycleProblems(stopped)).toEqual([expect.stringMatching(/^crm\.people: .*503/)]);
    expect(await syncedAt()).toBe(pulledAt);
    await h.sync();
    await h.expectConverged('crm', 'people');
  });

  it.skipIf(dialect.dialect !== 'sqlite')('a BLOB fails its edit, naming the column, and a later edit of the column goes', async () => {
    await people();
    const [ann] = await h.upstream.createRecords('crm', 'people', [{ name: 'Ann', age: 30 }]);
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const table = await sqlTable(h, 'crm', 'people');
    await sql(`INSERT INTO ${table} (name, age) VALUES ('Blob', x'3132')`);
    await sql(`UPDATE ${table} SET age = x'3334' WHERE id = ?`, [Number(ann)]);
    await h.sync();
    const failed = await outbox(h);
    expect(failed.map((e) => [e.operation, e.column_name, e.status])).toEqual([['insert', null, 'failed'], ['update', 'age', 'failed']]);
    for (const e of failed) expect(e.last_error).toMatch(/age: a BLOB cannot be sent.*text or a number/);
    await sql(`UPDATE ${table} SET age = 12 WHERE name = 'Blob'`);
    await sql(`UPDATE ${table} SET age = 31 WHERE id = ?`, [Number(ann)]);
    const [insert, update] = (await listOutbox(h.tm.mirror, {})).filter((e) => e.status === 'failed');
    expect([insert!.operation, update!.operation]).toEqual(['insert', 'update']);
    await retryOutbox(h.tm.mirror, { entryIds: [insert!.entryId] });
    await discardOutbox(h.tm.mirror, h.client, { entryIds: [update!.entryId] });
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people')).map((r) => r.values)).toEqual([
      { name: 'Ann', age: 31, email: null, status: null }, { name: 'Blob', age: 12, email: null, status: null },
    ]);
    expect(await outbox(h)).toEqual([]);
    await h.expectConverged('crm', 'people');
  });

  it('marks an edit of a record deleted upstream as conflict', async () => {
    await people();
    const [a, b] = await h.upstream.createRecords('crm', 'people', [{ name: 'a' }, { name: 'b' }]);
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const table = await sqlTable(h, 'crm', 'people');
    await sql(`UPDATE ${table} SET name = name || '!'`);
    await h.upstream.deleteRecords('crm', 'people', [b!]);
    await h.sync();
    expect((await outbox(h)).map((e) => [Number(e.record_id), e.status, e.last_error])).toEqual([
      [Number(b), 'conflict', `record ${b} was deleted upstream`],
    ]);
    expect((await h.upstream.allRecords('crm', 'people')).map((r) => [r.id, r.values.name])).toEqual([[a, 'a!']]);
  });

  for (const policy of ['local-wins', 'upstream-wins', 'manual'] as const) {
    it(`conflict policy ${policy}: a field changed on both sides; other fields merge`, async () => {
      await people({ conflictPolicies: [{ pattern: 'crm.*', policy }] });
      const [id] = await h.upstream.createRecords('crm', 'people', [{ name: 'before', age: 1, email: 'x@example.com' }]);
      await h.sync();
      const sql = questionMarkSql(h.tm);
      const table = await sqlTable(h, 'crm', 'people');
      await sql(`UPDATE ${table} SET name = ?, age = ? WHERE id = ?`, ['local', 2, Number(id)]);
      await h.upstream.updateRecords('crm', 'people', [{ id, name: 'upstream', email: 'y@example.com' }]);
      await h.sync();
      const [record] = await h.upstream.allRecords('crm', 'people');
      const [row] = await sql<{ name: string; age: number; email: string }>(`SELECT name, age, email FROM ${table}`);
      const entries = await outbox(h);
      // Fields edited on one side only merge whatever the policy.
      expect(record!.values).toMatchObject({ age: 2, email: 'y@example.com' });
      expect(row).toMatchObject({ age: 2, email: 'y@example.com' });
      if (policy === 'local-wins') {
        expect(record!.values.name).toBe('local');
        expect(row!.name).toBe('local');
        expect(entries).toEqual([]);
      } else if (policy === 'upstream-wins') {
        expect(record!.values.name).toBe('upstream');
        expect(row!.name).toBe('upstream');
        expect(entries).toEqual([]);
      } else {
        expect(record!.values.name).toBe('upstream');
        expect(row!.name).toBe('local');
        expect(entries).toEqual([expect.objectContaining({ column_name: 'name', status: 'conflict', last_error: expect.stringContaining('"upstream"') })]);
      }
    });
  }

  it('manual: `outbox retry` of a conflict sends the local value (it wins); a record deleted upstream cannot be retried into being', async () => {
    await people({ conflictPolicy: 'manual' });
    const [id, gone] = await h.upstream.createRecords('crm', 'people', [{ name: 'before' }, { name: 'doomed' }]);
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const table = await sqlTable(h, 'crm', 'people');
    await sql(`UPDATE ${table} SET name = name || ' local'`);
    await h.upstream.updateRecords('crm', 'people', [{ id, name: 'upstream' }]);
    await h.upstream.deleteRecords('crm', 'people', [gone!]);
    await h.sync();
    const conflicts = await listOutbox(h.tm.mirror, {});
    expect(conflicts.map((e) => [e.recordId, e.status])).toEqual([[Number(id), 'conflict'], [Number(gone), 'conflict']]);
    await expect(retryOutbox(h.tm.mirror, { entryIds: [conflicts[1]!.entryId] })).rejects.toThrow(new RegExp(`record ${gone} was deleted upstream.*discard`));
    // Selected by table, the edit of the deleted record is left as it is and the others go.
    expect(await retryOutbox(h.tm.mirror, { tables: ['crm.people'] })).toEqual({ retried: 1, deletedUpstream: [conflicts[1]!.entryId] });
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people')).map((r) => r.values.name)).toEqual(['before local']);
    expect((await outbox(h)).map((e) => [Number(e.record_id), e.status])).toEqual([[Number(gone), 'conflict']]);
  });

  for (const policy of ['upstream-wins', 'manual'] as const) {
    it(`${policy}: the fix of a failed edit is no conflict: the value before the first edit still waiting is the base`, async () => {
      await people({ conflictPolicy: policy });
      const [id] = await h.upstream.createRecords('crm', 'people', [{ name: 'n', status: 'lead' }]);
      await h.sync();
      const sql = questionMarkSql(h.tm);
      const table = await sqlTable(h, 'crm', 'people');
      await sql(`UPDATE ${table} SET status = 'no-such-option' WHERE id = ?`, [Number(id)]);
      await h.sync();
      expect((await outbox(h)).map((e) => e.status)).toEqual(['failed']);
      // Fixed in SQL: the new edit's value before is the refused one, which upstream never held.
      const customer = (await h.upstream.getTable('crm', 'people')).fields.find((f: { name: string }) => f.name === 'status').options
        .find((o: { name: string }) => o.name === 'customer').id;
      await sql(`UPDATE ${table} SET status = ? WHERE id = ?`, [customer, Number(id)]);
      await h.sync();
      expect((await h.upstream.allRecords('crm', 'people'))[0]!.values.status).toBe(customer);
      expect((await outbox(h)).map((e) => e.status)).toEqual(['failed']);
    });
  }

  it('an empty string in a column whose field holds no free text clears it upstream; in a text field it stays an empty string', async () => {
    await people();
    const [id] = await h.upstream.createRecords('crm', 'people', [{ name: 'n', age: 3, status: 'lead' }]);
    await h.sync();
    const table = await sqlTable(h, 'crm', 'people');
    const empty = dialect.dialect === 'postgres' ? 'age = NULL' : "age = ''";
    await questionMarkSql(h.tm)(`UPDATE ${table} SET name = '', status = '', ${empty} WHERE id = ?`, [Number(id)]);
    await h.sync();
    expect((await h.upstream.allRecords('crm', 'people'))[0]!.values).toMatchObject({ name: '', status: null, age: null });
    expect(await outbox(h)).toEqual([]);
  });

  for (const policy of ['upstream-wins', 'manual'] as const) {
    it(`${policy}: after a failed edit's fix was pushed, a later edit is no conflict, whether the failed one was discarded before or after`, async () => {
      await people({ conflictPolicy: policy });
      const [id] = await h.upstream.createRecords('crm', 'people', [{ name: 'n', age: 1 }]);
      await h.sync();
      const sql = questionMarkSql(h.tm);
      const table = await sqlTable(h, 'crm', 'people');
      const refused = dialect.dialect === 'postgres' ? "'NaN'" : '9e999';
      // Kept: fix pushed, then a later edit.
      await sql(`UPDATE ${table} SET age = ${refused} WHERE id = ?`, [Number(id)]);
      await h.sync();
      await sql(`UPDATE ${table} SET age = 8 WHERE id = ?`, [Number(id)]);
      await h.sync();
      await sql(`UPDATE ${table} SET age = 10 WHERE id = ?`, [Number(id)]);
      await h.sync();
      expect((await h.upstream.allRecords('crm', 'people'))[0]!.values.age).toBe(10);
      expect((await outbox(h)).map((e) => e.status)).toEqual(['failed']);
      await discardOutbox(h.tm.mirror, h.client, { entryIds: (await listOutbox(h.tm.mirror, {})).map((e) => e.entryId) });
      // Discarded before the next cycle: fix, then discard, as the docs say.
      await sql(`UPDATE ${table} SET age = ${refused} WHERE id = ?`, [Number(id)]);
      await h.sync();
      await sql(`UPDATE ${table} SET age = 12 WHERE id = ?`, [Number(id)]);
      const [failed] = (await listOutbox(h.tm.mirror, {})).filter((e) => e.status === 'failed');
      await discardOutbox(h.tm.mirror, h.client, { entryIds: [failed!.entryId] });
      await h.sync();
      expect((await h.upstream.allRecords('crm', 'people'))[0]!.values.age).toBe(12);
      expect(await outbox(h)).toEqual([]);
    });
  }

  it('a push the upstream refuses outright (401) fails the cycle, keeps the edits, and the pull still runs', async () => {
    await people();
    const [id] = await h.upstream.createRecords('crm', 'people', [{ name: 'a' }]);
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const table = await sqlTable(h, 'crm', 'people');
    await sql(`UPDATE ${table} SET age = ? WHERE id = ?`, [5, Number(id)]);
    await h.upstream.createRecords('crm', 'people', [{ name: 'b' }]);
    const refused = upstreamWith(h.client, {
      updateRecords: () => Promise.reject(new UpstreamError({ endpoint: 'updateRecords', method: 'PATCH', path: '/records' }, 401, 'unauthorized', { attempts: 1 })),
    });
    const report = await new SyncEngine({ client: refused, mirror: h.tm.mirror, options: { lookbackMs: 0 } }).runCycle();
    expect(report.ok).toBe(false);
    expect(cycleProblems(report)).toEqual([expect.stringMatching(/^push: .*401/)]);
    expect((await outbox(h)).map((e) => [e.status, Number(e.attempts)])).toEqual([['pending', 0]]);
    // The pull ran: the record created upstream is in the mirror, and the local edit is still there.
    expect((await sql<{ name: string; age: number | null }>(`SELECT name, age FROM ${table} ORDER BY id`)).map((r) => [r.name, r.age])).toEqual([['a', 5], ['b', null]]);
  });

  it('with 30 % injected faults, every valid edit eventually arrives, none twice', async () => {
    await people({}, false);
    const ids = await h.upstream.createRecords('crm', 'people', Array.from({ length: 40 }, (_, i) => ({ name: `p${i}` })));
    await h.sync();
    const sql = questionMarkSql(h.tm);
    const table = await sqlTable(h, 'crm', 'people');
    for (const [i, id] of ids.entries()) await sql(`UPDATE ${table} SET age = ? WHERE id = ?`, [i, Number(id)]);
    for (let i = 0; i < 10; i++) {
      await sql(`INSERT INTO ${table} (name, age) VALUES (?, ?)`, [`new${i}`, 100 + i]);
    }
    await sql(`DELETE FROM ${table} WHERE id IN (?, ?)`, [Number(ids[0]), Number(ids[1])]);
    await h.upstream.setFaults({ errorRate: 0.1, rateLimitRate: 0.1, dropRate: 0.1, retryAfterSeconds: 0, seed: 7 });
    for (let cycle = 0; cycle < 30 && (await outbox(h)).length > 0; cycle++) {
      await h.engine.runCycle({ forceFullScan: true }).catch(() => undefined);
      // Entries waiting for their backoff are made due again, as time would.
      await h.tm.sql(`UPDATE ${h.tm.table('_wsmirror_outbox')} SET next_attempt_at = NULL`);
    }
    await h.upstream.clearFaults();
    expect(await outbox(h)).toEqual([]);
    await h.sync();
    const upstream = await h.upstream.allRecords('crm', 'people');
    expect(upstream).toHaveLength(48);
    expect(upstream.map((r) => r.values.name).filter((n) => String(n).startsWith('new')).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `new${i}`).sort(),
    );
    for (const r of upstream) if (String(r.values.name).startsWith('p')) expect(r.values.age).toBe(Number(String(r.values.name).slice(1)));
    await h.expectConverged('crm', 'people');
  }, 120_000);
});
