import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { adminOf, field, fieldsPath, makeModule, makeTable, ok, recordsPath } from '../helpers/schema.ts';

// What expressions do to records, through HTTP: defaults at creation, canWrite and canRead per
// record, onUpdate triggers inside the update's transaction, dynamic-choice selections, function
// fields in lists, filters and sorts, and the bounds that keep a hostile expression harmless.

let emu: RunningEmulator;
let api: ReturnType<typeof apiOf>;
const NOW = '2026-03-01T10:00:00.000Z';

async function list(table: string, query = '', token?: string) {
  const res = await api('GET', `${recordsPath('shop', table)}${query}`, undefined, token);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as { id: string; values: Record<string, unknown> }[];
}

async function createIn(table: string, records: unknown[], token?: string) {
  return api('POST', recordsPath('shop', table), { records }, token);
}

async function idsOf(table: string, records: unknown[]): Promise<string[]> {
  return ok(await createIn(table, records), `create in ${table}`).body.data.ids;
}

async function valuesOf(table: string, id: string, token?: string) {
  const rows = await list(table, `?filter=${encodeURIComponent(JSON.stringify({ id }))}`, token);
  return rows[0]!.values;
}

beforeAll(async () => {
  emu = await startEmulator({
    apiKeys: [
      { key: 'test-key', grants: 'all' },
      { key: 'editor-key', grants: ['role:editor'] },
    ],
  });
  api = apiOf(emu);
  ok(await adminOf(emu)('PUT', 'clock', { now: NOW, frozen: true }));
  await makeModule(emu, 'shop');
  await makeTable(emu, 'shop', 'customers', {}, [
    field('name', 'string'), field('active', 'boolean'), field('country', 'string'),
  ]);
  await makeTable(emu, 'shop', 'orders', { hasHistory: true }, [
    field('code', 'string', { unique: true }),
    field('amount', 'number'),
    field('qty', 'number'),
    field('status', 'choice', { options: [{ name: 'open' }, { name: 'paid' }] }),
    field('customer', 'reference', { refTableName: 'customers' }),
    field('created_on', 'date', { defaultValue: { $nx: 'today()' } }),
    field('label', 'string', { defaultValue: { $nx: 'upper(code) + "-" + text(qty)' } }),
    field('total', 'function', { expression: 'amount * qty' }),
    field('big', 'function', { expression: 'if total > 100 then "big" else "small" end' }),
    field('paid_at', 'timestamp'),
    field('history', 'string'),
  ]);
});
afterAll(() => emu.close());

describe('$nx defaults', () => {
  it('are evaluated at creation for each record, reading the values sent', async () => {
    const [a, b] = await idsOf('orders', [{ code: 'a1', qty: 2 }, { code: 'b1' }]);
    expect(await valuesOf('orders', a!)).toMatchObject({ created_on: '2026-03-01', label: 'A1-2' });
    expect(await valuesOf('orders', b!)).toMatchObject({ created_on: '2026-03-01', label: 'B1-' });
  });

  it('do not apply to fields sent, even as null', async () => {
    const [id] = await idsOf('orders', [{ code: 'c1', created_on: null, label: 'mine' }]);
    expect(await valuesOf('orders', id!)).toMatchObject({ created_on: null, label: 'mine' });
  });

  it('a default that fails or gives a value the field does not take is 400, and nothing is created', async () => {
    ok(await api('POST', fieldsPath('shop', 'customers'), field('ratio', 'number', { defaultValue: { $nx: '1 / 0' } })));
    ok(await api('POST', fieldsPath('shop', 'customers'), field('since', 'date', { defaultValue: { $nx: '"yesterday"' } })));
    const before = await list('customers');
    const res = await createIn('customers', [{ name: 'ok', ratio: 1, since: '2020-01-01' }, { name: 'x' }]);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('body.records[1].ratio: the default expression failed: line 1, column 3: division by zero');
    expect(res.body.error.message).toContain('body.records[1].since: the default expression gave "yesterday", which does not fit: ');
    expect(res.body.error.message).not.toContain('(root)');
    expect(await list('customers')).toEqual(before);
    ok(await api('DELETE', `${fieldsPath('shop', 'customers')}/batch`, { fieldNames: ['ratio', 'since'] }));
  });

  it('a default whose value can never fit its field is reported in expressionErrors when saved, and not applied', async () => {
    const path = fieldsPath('shop', 'customers');
    const saved = await api('POST', `${path}/batch`, [
      field('g', 'number', { defaultValue: { $nx: '"abc"' } }),
      field('flag', 'boolean', { defaultValue: { $nx: 'length(name)' } }),
      field('tags', 'multi', { options: [{ name: 'a' }], defaultValue: { $nx: '"a"' } }),
      // A record for a reference, text for a date, a value of unknown type: these may fit.
      field('buddy', 'reference', { refTableName: 'customers', defaultValue: { $nx: 'first(select customers)' } }),
      field('day', 'date', { defaultValue: { $nx: 'today()' } }),
      field('maybe', 'number', { defaultValue: { $nx: 'if active then 1 else "x" end' } }),
    ]);
    expect(saved.status).toBe(201);
    expect(saved.body.data.map((f: any) => f.expressionErrors)).toEqual([
      [{ line: 1, column: 1, message: 'defaultValue.$nx: field g takes number, not text' }],
      [{ line: 1, column: 1, message: 'defaultValue.$nx: field flag takes boolean, not number' }],
      [{ line: 1, column: 1, message: 'defaultValue.$nx: field tags takes a list of text, not text' }],
      undefined, undefined, undefined,
    ]);
    // Records are created without them, also when the request names none of those fields.
    const [id] = await idsOf('customers', [{ name: 'nx', active: true }]);
    expect(await valuesOf('customers', id!)).toMatchObject({ g: null, flag: null, tags: null, day: '2026-03-01', maybe: 1 });
    // A field saved later with the same default is flagged the same way (and a fix clears it).
    const fixed = await api('PATCH', `${path}/g`, { defaultValue: { $nx: 'length(name)' } });
    expect(fixed.body.data).not.toHaveProperty('expressionErrors');
    ok(await api('DELETE', `${path}/batch`, { fieldNames: ['g', 'flag', 'tags', 'buddy', 'day', 'maybe'] }));
    ok(await api('DELETE', recordsPath('shop', 'customers'), { records: [id] }));
  });
});

describe('function fields', () => {
  let ids: string[];
  beforeAll(async () => {
    ids = await idsOf('orders', [
      { code: 'f1', amount: 10, qty: 3 },
      { code: 'f2', amount: 50, qty: 4 },
      { code: 'f3', amount: 2, qty: 1 },
      { code: 'f4', amount: 7 },
    ]);
  });

  it('are computed for every record read, also from other function fields', async () => {
    const rows = await list('orders', `?filter=${encodeURIComponent(JSON.stringify({ id: ids }))}`);
    expect(rows.map((r) => [r.values.total, r.values.big])).toEqual([[30, 'small'], [200, 'big'], [2, 'small'], [null, 'small']]);
  });

  it('filter by their value, as returned', async () => {
    const rows = await list('orders', `?filter=${encodeURIComponent(JSON.stringify({ big: 'big' }))}`);
    expect(rows.map((r) => r.id)).toEqual([ids[1]]);
    const any = await list('orders', `?filter=${encodeURIComponent(JSON.stringify({ total: [2, 30], code: ['f1', 'f3', 'f4'] }))}`);
    expect(any.map((r) => r.id)).toEqual([ids[0], ids[2]]);
    const empty = await list('orders', `?filter=${encodeURIComponent(JSON.stringify({ total: null, code: ['f1', 'f4'] }))}`);
    expect(empty.map((r) => r.id)).toEqual([ids[3]]);
  });

  it('sort by their value: empty first ascending, last descending, ties by id; paging over the sorted list', async () => {
    const filter = `filter=${encodeURIComponent(JSON.stringify({ id: ids }))}`;
    expect((await list('orders', `?${filter}&sort=total`)).map((r) => r.values.total)).toEqual([null, 2, 30, 200]);
    expect((await list('orders', `?${filter}&sort=-total`)).map((r) => r.values.total)).toEqual([200, 30, 2, null]);
    expect((await list('orders', `?${filter}&sort=big`)).map((r) => r.id)).toEqual([ids[1], ids[0], ids[2], ids[3]]);
    const page = await api('GET', `${recordsPath('shop', 'orders')}?${filter}&sort=-total&limit=2&offset=1`);
    expect(page.body.data.map((r: any) => r.values.total)).toEqual([30, 2]);
    expect(page.body.page_info).toEqual({ has_more: true, limit: 2, offset: 1 });
  });

  it('a select counts records of another table', async () => {
    const [acme] = await idsOf('customers', [{ name: 'acme', active: true }]);
    await idsOf('orders', [{ code: 's1', customer: Number(acme) }, { code: 's2', customer: Number(acme) }]);
    ok(await api('POST', fieldsPath('shop', 'customers'), field('orders_count', 'function', {
      expression: 'count(select orders where customer = id(this))',
    })));
    ok(await api('POST', fieldsPath('shop', 'customers'), field('spent', 'function', {
      expression: 'sum((select orders where code = "s1" or code = "s2").qty) + 1',
    })));
    expect(await valuesOf('customers', acme!)).toMatchObject({ orders_count: 2, spent: 1 });
  });

  it('a failing expression reads as null; a hostile one is stopped and the server keeps answering', async () => {
    await makeTable(emu, 'shop', 'many', {}, [field('n', 'number')]);
    for (let i = 0; i < 3; i++) await idsOf('many', Array.from({ length: 1000 }, (_, j) => ({ n: i * 1000 + j })));
    ok(await api('POST', fieldsPath('shop', 'many'), field('fails', 'function', { expression: 'n / (n - n)' })));
    ok(await api('POST', fieldsPath('shop', 'many'), field('hostile', 'function', {
      expression: 'count(select many where count(select many where n > 0) > 0)',
    })));
    const started = Date.now();
    const rows = await list('many', '?limit=3');
    expect(rows.map((r) => [r.values.fails, r.values.hostile])).toEqual([[null, null], [null, null], [null, null]]);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await api('GET', '')).status).toBe(200);
  });
});

describe('canRead', () => {
  it('hides the value (null) for the records where it is false or fails; filters see it hidden too', async () => {
    await makeTable(emu, 'shop', 'notes', {}, [
      field('owner', 'string'), field('body', 'string'), field('n', 'number'),
    ]);
    ok(await api('PATCH', `${fieldsPath('shop', 'notes')}/body`, { canRead: 'owner = "me" or userRole() = "admin" and n > 1' }));
    ok(await api('PATCH', `${fieldsPath('shop', 'notes')}/n`, { canRead: '1 / (n - 5) > 0 or true' }));
    const [mine, other, five] = await idsOf('notes', [
      { owner: 'me', body: 'mine', n: 1 }, { owner: 'you', body: 'yours', n: 2 }, { owner: 'you', body: 'five', n: 5 },
    ]);
    expect(await valuesOf('notes', mine!)).toEqual({ owner: 'me', body: 'mine', n: 1 });
    expect(await valuesOf('notes', other!)).toEqual({ owner: 'you', body: 'yours', n: 2 });
    // n = 5 divides by zero: the guard fails and hides n.
    expect(await valuesOf('notes', five!)).toEqual({ owner: 'you', body: 'five', n: null });
    // An editor key: userRole() is "editor", so only the owner's own note shows its body.
    expect((await list('notes', '', 'editor-key')).map((r) => r.values.body)).toEqual(['mine', null, null]);
    const hidden = await list('notes', `?filter=${encodeURIComponent(JSON.stringify({ body: 'yours' }))}`, 'editor-key');
    expect(hidden).toEqual([]);
    const asNull = await list('notes', `?filter=${encodeURIComponent(JSON.stringify({ body: null }))}&sort=-body`, 'editor-key');
    expect(asNull.map((r) => r.id)).toEqual([other, five]);
  });
});

describe('canWrite', () => {
  it('refuses a write (403) for records where it is false or fails; the whole request changes nothing', async () => {
    await makeTable(emu, 'shop', 'accounts', { hasHistory: true }, [field('locked', 'boolean'), field('balance', 'number')]);
    const [open, locked, thirteen] = await idsOf('accounts', [{ balance: 1 }, { locked: true, balance: 2 }, { balance: 13 }]);
    ok(await api('PATCH', `${fieldsPath('shop', 'accounts')}/balance`, { canWrite: 'locked != true and 1 / (balance - 13) != 0' }));
    const before = await list('accounts');
    const res = await api('PATCH', recordsPath('shop', 'accounts'), { records: [{ id: open, balance: 5 }, { id: locked, balance: 6 }] });
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('body.records[1].balance: canWrite of field balance denies this write');
    const failing = await api('PATCH', recordsPath('shop', 'accounts'), { records: [{ id: thirteen, balance: 7 }] });
    expect(failing.status).toBe(403);
    expect(await list('accounts')).toEqual(before);
    // Other fields of the same record stay writable; the allowed record alone goes through.
    ok(await api('PATCH', recordsPath('shop', 'accounts'), { records: [{ id: locked, locked: false }, { id: open, balance: 5 }] }));
    expect((await valuesOf('accounts', open!)).balance).toBe(5);
  });

  it('on create, is evaluated for the record as it would be', async () => {
    const res = await createIn('accounts', [{ locked: true, balance: 1 }]);
    expect(res.status).toBe(403);
    expect(res.body.error.message).toBe('body.records[0].balance: canWrite of field balance denies this write');
    expect((await createIn('accounts', [{ locked: true }])).status).toBe(201);
  });
});

describe('onUpdate', () => {
  beforeAll(async () => {
    ok(await api('PATCH', `${fieldsPath('shop', 'orders')}/status`, {
      onUpdate: 'paid_at := if status = "paid" then now() else null end; history := history + status + ";"',
    }));
    ok(await api('PATCH', `${fieldsPath('shop', 'orders')}/qty`, { onUpdate: 'code := "dup"' }));
  });

  it('runs when its field changes, in the same request: assignments land with the update', async () => {
    const [id] = await idsOf('orders', [{ code: 't1', status: 'open' }]);
    expect(await valuesOf('orders', id!)).toMatchObject({ paid_at: null, history: null });
    ok(await api('PATCH', recordsPath('shop', 'orders'), { records: [{ id, status: 'paid' }] }));
    expect(await valuesOf('orders', id!)).toMatchObject({ paid_at: NOW, history: 'paid;' });
  });

  it('does not run when the value stays the same, nor for other fields', async () => {
    const [id] = await idsOf('orders', [{ code: 't2', status: 'open' }]);
    ok(await api('PATCH', recordsPath('shop', 'orders'), { records: [{ id, status: 'open', amount: 3 }] }));
    expect(await valuesOf('orders', id!)).toMatchObject({ history: null });
  });

  it('a trigger whose assignment breaks a rule rolls the whole update back', async () => {
    const [a, b] = await idsOf('orders', [{ code: 'u1', qty: 1 }, { code: 'u2', qty: 1 }]);
    ok(await api('PATCH', recordsPath('shop', 'orders'), { records: [{ id: a, qty: 2 }] }));
    expect((await valuesOf('orders', a!)).code).toBe('dup');
    const before = await list('orders', '?limit=100');
    const res = await api('PATCH', recordsPath('shop', 'orders'), { records: [{ id: b, qty: 5, amount: 9 }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('value "dup" of unique field code already exists');
    expect(await list('orders', '?limit=100')).toEqual(before);
  });

  it('an assignment of a value the field does not take is 400 naming the value', async () => {
    const [id] = await idsOf('orders', [{ code: 'v1' }]);
    ok(await api('PATCH', `${fieldsPath('shop', 'orders')}/amount`, { onUpdate: 'status := "lost"' }));
    const res = await api('PATCH', recordsPath('shop', 'orders'), { records: [{ id, amount: 1 }] });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(
      new RegExp(`^body\\.records\\[0\\] \\(onUpdate of amount\\): status := … gave "lost", which does not fit: "lost" is not an option of field status`),
    );
    ok(await api('PATCH', `${fieldsPath('shop', 'orders')}/amount`, { onUpdate: '' }));
  });
});

describe('dynamic choices', () => {
  let active: string;
  let inactive: string;
  let local: string;
  beforeAll(async () => {
    const ids = await idsOf('customers', [
      { name: 'on', active: true, country: 'fr' }, { name: 'off', active: false, country: 'fr' }, { name: 'de', active: true, country: 'de' },
    ]);
    [active, inactive, local] = [ids[0]!, ids[1]!, ids[2]!];
    ok(await api('POST', `${fieldsPath('shop', 'orders')}/batch`, [
      field('buyer', 'dchoice', { options: 'select customers where active = true' }),
      field('ship_country', 'string'),
      field('peers', 'dmulti', { options: 'select customers where country = this.ship_country' }),
    ]));
  });

  it('accept ids of records the selection gives, and refuse others with 400', async () => {
    expect((await createIn('orders', [{ code: 'd1', buyer: active }])).status).toBe(201);
    const res = await createIn('orders', [{ code: 'd2', buyer: inactive }]);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe(`body.records[0].buyer: record ${inactive} is not among the records the selection of buyer offers`);
  });

  it('a selection that reads the record is evaluated for that record', async () => {
    expect((await createIn('orders', [{ code: 'd3', ship_country: 'fr', peers: [active, inactive] }])).status).toBe(201);
    const res = await createIn('orders', [{ code: 'd4', ship_country: 'de', peers: [local, active] }]);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(`body.records[0].peers: record ${active} is not among`);
  });

  it('a field whose selection does not check accepts no value', async () => {
    ok(await api('POST', fieldsPath('shop', 'orders'), field('broken_pick', 'dchoice', { options: 'select nowhere' })));
    const res = await createIn('orders', [{ code: 'd5', broken_pick: active }]);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('field broken_pick has no valid selection expression');
  });
});

describe('the budget of a request', () => {
  it('bounds all the evaluations of one request together: one that would take longer is 400 within a second or two, and others are answered meanwhile', async () => {
    await makeTable(emu, 'shop', 'big', {}, [field('n', 'number')]);
    await idsOf('big', Array.from({ length: 150 }, (_, j) => ({ n: j })));
    // Each record's value stops at its own budget (200,000 steps); a sort needs every record's.
    ok(await api('POST', fieldsPath('shop', 'big'), field('heavy', 'function', {
      expression: 'count(select big where count(select big where count(select big) > 0) > 0)',
    })));
    const started = performance.now();
    const heavy = api('GET', `${recordsPath('shop', 'big')}?sort=heavy&limit=1`).then((res) => ({ res, at: performance.now() - started }));
    const light = api('GET', '').then((res) => ({ res, at: performance.now() - started }));
    const [h, l] = await Promise.all([heavy, light]);
    expect(h.res.status, JSON.stringify(h.res.body)).toBe(400);
    expect(h.res.body.error.message).toMatch(/^the expressions of this request took more than .* together and were stopped/);
    expect(h.at).toBeLessThan(2_500);
    expect(l.res.status).toBe(200);
    expect(l.at).toBeLessThan(2_500);
  });

  it('leaves room for ordinary work: a sort over a function field of a few thousand records', async () => {
    await makeTable(emu, 'shop', 'wide', {}, [field('n', 'number')]);
    await idsOf('wide', Array.from({ length: 3000 }, (_, j) => ({ n: j % 100 })));
    ok(await api('POST', fieldsPath('shop', 'wide'), field('twice', 'function', { expression: 'if n > 50 then n * 2 else n + 1 end' })));
    const rows = await list('wide', '?sort=-twice&limit=2');
    expect(rows.map((r) => r.values.twice)).toEqual([198, 198]);
  });
});
