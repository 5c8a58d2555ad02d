import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, fieldsPath, makeModule, makeTable, ok, recordsPath, tablePath } from '../helpers/schema.ts';

// Expressions and the guards of the data they reach: an expression never shows a caller what the
// caller could not read through the records list (table readRoles, field readRoles, canRead).

let emu: RunningEmulator;
let api: ReturnType<typeof apiOf>;
const ED = 'ed';

async function list(table: string, query: string, token?: string) {
  const res = await api('GET', `${recordsPath('crm', table)}${query}`, undefined, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { id: string; values: Record<string, unknown> }[];
}

beforeAll(async () => {
  emu = await startEmulator({ apiKeys: [{ key: 'test-key', grants: 'all' }, { key: ED, grants: ['role:editor'] }] });
  api = apiOf(emu);
  await makeModule(emu, 'crm');
  await makeTable(emu, 'crm', 'vault', {}, [field('secret', 'string')]);
  ok(await api('PATCH', tablePath('crm', 'vault'), { readRoles: ['admin'] }));
  ok(await api('POST', recordsPath('crm', 'vault'), { records: [{ secret: 's3cret' }] }));
  await makeTable(emu, 'crm', 'pp', {}, [
    field('title', 'string'),
    field('notes', 'string', { readRoles: ['admin'] }),
    field('pin', 'string', { canRead: 'userRole() = "admin"' }),
  ]);
  ok(await api('POST', recordsPath('crm', 'pp'), { records: [{ title: 't', notes: 'admin only', pin: '1234' }] }));
});
afterAll(() => emu.close());

describe('expressions read as the caller reads', () => {
  it('a function field does not show a key the records of a table its role may not read', async () => {
    expect((await api('GET', recordsPath('crm', 'vault'), undefined, ED)).status).toBe(403);
    const created = await api('POST', fieldsPath('crm', 'pp'), {
      name: 'peek', type: 'function', labels: { '': 'P' }, expression: 'concat((select vault).secret)',
    }, ED);
    expect(created.status).toBe(201);
    ok(await api('POST', fieldsPath('crm', 'pp'), field('vcount', 'function', { expression: 'count(select vault)' }), ED));
    expect((await list('pp', '?fields=peek,vcount', ED))[0]!.values).toEqual({ peek: '', vcount: 0 });
    expect((await list('pp', '?fields=peek,vcount'))[0]!.values).toEqual({ peek: 's3cret', vcount: 1 });
  });

  it("a function field does not show a key a field its role may not read (readRoles), nor one canRead hides", async () => {
    ok(await api('POST', `${fieldsPath('crm', 'pp')}/batch`, [
      field('copy_notes', 'function', { expression: 'notes' }),
      field('copy_pin', 'function', { expression: 'concat("pin: ", this.pin)' }),
      field('first_notes', 'function', { expression: 'first((select pp).notes)' }),
    ], ED));
    const query = '?fields=copy_notes,copy_pin,first_notes';
    expect((await list('pp', query, ED))[0]!.values).toEqual({ copy_notes: null, copy_pin: 'pin: ', first_notes: null });
    expect((await list('pp', query))[0]!.values).toEqual({ copy_notes: 'admin only', copy_pin: 'pin: 1234', first_notes: 'admin only' });
  });

  it('filters and sorts on such a field see what the caller reads', async () => {
    const filter = encodeURIComponent(JSON.stringify({ peek: 's3cret' }));
    expect(await list('pp', `?filter=${filter}`, ED)).toEqual([]);
    expect(await list('pp', `?filter=${filter}`)).toHaveLength(1);
    const byNotes = encodeURIComponent(JSON.stringify({ copy_notes: 'admin only' }));
    expect(await list('pp', `?filter=${byNotes}`, ED)).toEqual([]);
  });

  it('a dynamic choice cannot offer, nor so reveal, the records of a table the caller may not read', async () => {
    ok(await api('POST', fieldsPath('crm', 'pp'), field('pick', 'dchoice', { options: 'select vault where secret = "s3cret"' }), ED));
    const [vaultId] = (await list('vault', '')).map((r) => r.id);
    const [ppId] = (await list('pp', '')).map((r) => r.id);
    const asEditor = await api('PATCH', recordsPath('crm', 'pp'), { records: [{ id: ppId, pick: vaultId }] }, ED);
    expect(asEditor.status).toBe(400);
    expect(asEditor.body.error.message).toContain('not among the records the selection of pick offers');
    ok(await api('PATCH', recordsPath('crm', 'pp'), { records: [{ id: ppId, pick: vaultId }] }));
  });

  it('guards themselves read every value: they are set with the grant, and decide access', async () => {
    ok(await api('POST', fieldsPath('crm', 'pp'), field('gated', 'string', { canRead: 'notes = "admin only" and count(select vault) = 1' })));
    const [ppId] = (await list('pp', '')).map((r) => r.id);
    ok(await api('PATCH', recordsPath('crm', 'pp'), { records: [{ id: ppId, gated: 'visible' }] }));
    expect((await list('pp', '?fields=gated', ED))[0]!.values).toEqual({ gated: 'visible' });
  });
});

describe('triggers and defaults that reach past a guard need the grant', () => {
  // What a trigger or a default stores outlives the request, and it runs with the access of
  // whoever fires it: set by a key without the grant, one that writes a guarded field, or reads
  // what that key may not, would act for a key that may (a trigger fired by an admin's update).
  beforeAll(async () => {
    await makeTable(emu, 'crm', 'gw', {}, [
      field('title', 'string'),
      field('locked', 'string', { canWrite: 'userRole() = "admin"' }),
      field('owner', 'string', { writeRoles: ['admin'] }),
      field('note', 'string'),
    ]);
  });
  const gw = fieldsPath('crm', 'gw');

  it('an onUpdate trigger that writes a field with a write guard (canWrite, writeRoles)', async () => {
    for (const [target, guard] of [['locked', 'canWrite'], ['owner', 'writeRoles: admin']]) {
      const res = await api('PATCH', `${gw}/title`, { onUpdate: `${target} := "pwned"` }, ED);
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.error.message).toBe(
        `body.onUpdate: a trigger that writes field ${target}, which has a write guard (${guard}), needs the grant schema:manage-permissions, which this API key lacks`,
      );
    }
    const created = await api('POST', gw, field('t2', 'string', { onUpdate: 'this.locked := "pwned"' }), ED);
    expect(created.status).toBe(403);
    expect((await api('GET', `${gw}/title`)).body.data).not.toHaveProperty('onUpdate');
    expect((await api('GET', gw)).body.data.map((f: any) => f.name)).not.toContain('t2');
  });

  it('a default (literal or $nx) of a field with a write guard', async () => {
    for (const [name, defaultValue] of [['locked', 'pwned'], ['owner', { $nx: '"pwned"' }]] as const) {
      const res = await api('PATCH', `${gw}/${name}`, { defaultValue }, ED);
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.error.message).toContain(`body.defaultValue: a default of field ${name}, which has a write guard`);
    }
    expect((await api('GET', `${gw}/locked`)).body.data).not.toHaveProperty('defaultValue');
  });

  it('a trigger or default that reads a field or a table the key may not read', async () => {
    const cases: [string, unknown, string][] = [
      ['onUpdate', 'note := concat((select vault).secret)', 'reads table vault (role editor may not read records of table crm.vault (readRoles: admin))'],
      ['defaultValue', { $nx: 'first((select pp).notes)' }, 'reads field notes, which role editor may not read (readRoles: admin)'],
      ['defaultValue', { $nx: 'first((select pp).pin)' }, 'reads field pin, which has a read guard (canRead)'],
    ];
    for (const [property, value, why] of cases) {
      const res = await api('PATCH', `${gw}/note`, { [property]: value }, ED);
      expect(res.status, JSON.stringify(res.body)).toBe(403);
      expect(res.body.error.message).toContain(`body.${property}: a ${property === 'onUpdate' ? 'trigger' : 'default'} that ${why}`);
    }
  });

  it('the grant sets them, and they then act for every caller (a trigger keeps a guarded field up to date)', async () => {
    ok(await api('PATCH', `${gw}/title`, { onUpdate: 'locked := upper(title); owner := userRole()' }));
    ok(await api('PATCH', `${gw}/note`, { defaultValue: { $nx: 'concat("by ", userRole())' } }));
    const [id] = ok(await api('POST', recordsPath('crm', 'gw'), { records: [{ title: 'a' }] }, ED)).body.data.ids;
    ok(await api('PATCH', recordsPath('crm', 'gw'), { records: [{ id, title: 'b' }] }, ED));
    expect((await list('gw', '')).find((r) => r.id === id)!.values).toMatchObject({ title: 'b', locked: 'B', owner: 'editor', note: 'by editor' });
  });

  it('without the grant a key still sets triggers and defaults that stay within its own access', async () => {
    ok(await api('PATCH', `${gw}/title`, { onUpdate: 'note := concat(title, "!")' }, ED));
    ok(await api('PATCH', `${gw}/note`, { defaultValue: { $nx: 'upper(title)' } }, ED));
    ok(await api('PATCH', `${gw}/note`, { defaultValue: 'plain' }, ED));
    ok(await api('PATCH', `${gw}/title`, { onUpdate: '' }, ED));
  });
});
