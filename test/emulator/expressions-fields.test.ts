import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { changesAfter, field, fieldsPath, makeModule, makeTable, openPoll, snapshot, tablePath } from '../helpers/schema.ts';

// The field rules of the spec that involve expressions, through HTTP: what is compiled before a
// save (guards, 400), what is checked after it (expressionErrors), and what may name what.

describe('expressions in field requests', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const path = fieldsPath('shop', 'orders');
  const create = (body: unknown) => api('POST', path, body);
  const patch = (name: string, body: unknown) => api('PATCH', `${path}/${name}`, body);

  beforeAll(async () => {
    emu = await startEmulator({
      apiKeys: [{ key: 'test-key', grants: 'all' }, { key: 'schema-only', grants: ['schema:write'] }],
    });
    api = apiOf(emu);
    await makeModule(emu, 'shop');
    await makeTable(emu, 'shop', 'customers', {}, [field('name', 'string'), field('active', 'boolean'), field('tier', 'number')]);
    await makeTable(emu, 'shop', 'orders', {}, [field('amount', 'number'), field('qty', 'number'), field('note', 'string')]);
  });
  afterAll(() => emu.close());

  describe('function fields (create rules 3, 4; update rules 4, 5)', () => {
    it('a valid expression saves without expressionErrors', async () => {
      const res = await create(field('total', 'function', { expression: 'amount * qty' }));
      expect(res.status).toBe(201);
      expect(res.body.data).not.toHaveProperty('expressionErrors');
    });

    it('an invalid expression still saves (201) and carries expressionErrors with line, column and message', async () => {
      const res = await create(field('broken', 'function', { expression: 'amount *\n  prise + nosuch(1)' }));
      expect(res.status).toBe(201);
      expect(res.body.data.expressionErrors).toEqual([
        { line: 2, column: 3, message: 'unknown field prise in table orders' },
        { line: 2, column: 11, message: 'unknown function nosuch' },
      ]);
      expect((await api('GET', `${path}/broken`)).body.data.expressionErrors).toHaveLength(2);
    });

    it('a syntax error is one expressionError at the offending token', async () => {
      const res = await create(field('syntax', 'function', { expression: 'if amount > 1 then 1 end' }));
      expect(res.status).toBe(201);
      expect(res.body.data.expressionErrors).toEqual([
        { line: 1, column: 22, message: 'expected "else" after the then branch (every if needs an else), found "end"' },
      ]);
    });

    it('an update that fixes the expression clears expressionErrors; one that breaks it is 200 with them', async () => {
      const fixed = await patch('broken', { expression: 'amount + 1' });
      expect(fixed.status).toBe(200);
      expect(fixed.body.data).not.toHaveProperty('expressionErrors');
      const broken = await patch('broken', { expression: 'amount + "x" * 2' });
      expect(broken.status).toBe(200);
      expect(broken.body.data.expressionErrors).toEqual([{ line: 1, column: 14, message: '* takes numbers, not text and number' }]);
    });

    it('resending an unchanged expression checks it again, against the table as it is now', async () => {
      const t = fieldsPath('shop', 'stale');
      await makeTable(emu, 'shop', 'stale', {}, [field('n', 'number'), field('f', 'function', { expression: 'n * 2' })]);
      expect((await api('DELETE', `${t}/n`)).status).toBe(200);
      expect((await api('POST', t, field('n', 'string'))).status).toBe(201);
      const typeError = [{ line: 1, column: 3, message: '* takes numbers, not text and number' }];
      // Already checked when n came back as text (see below), and checked again when resent.
      expect((await api('GET', `${t}/f`)).body.data.expressionErrors).toEqual(typeError);
      const resent = await api('PATCH', `${t}/f`, { expression: 'n * 2' });
      expect(resent.status).toBe(200);
      expect(resent.body.data.expressionErrors).toEqual(typeError);
      // Once n is a number again, resending clears them.
      await api('DELETE', `${t}/n`);
      await api('POST', t, field('n', 'number'));
      expect((await api('PATCH', `${t}/f`, { expression: 'n * 2' })).body.data).not.toHaveProperty('expressionErrors');
    });

    it('an expression cannot read its own field', async () => {
      const res = await create(field('selfish', 'function', { expression: 'selfish + 1' }));
      expect(res.body.data.expressionErrors[0]).toMatchObject({ line: 1, column: 1, message: expect.stringContaining('cannot read field selfish itself') });
    });

    it('a batch checks expressions after the whole batch is saved: fields of the batch are in scope', async () => {
      const res = await api('POST', `${path}/batch`, [
        field('b_price', 'number'),
        field('b_double', 'function', { expression: 'b_price * 2' }),
      ]);
      expect(res.status).toBe(201);
      expect(res.body.data[1]).not.toHaveProperty('expressionErrors');
    });
  });

  describe('expressionErrors follow the schema ("present when an expression is invalid")', () => {
    const t = fieldsPath('shop', 'follow');
    const errorsOf = async (path: string, name: string) => (await api('GET', `${path}/${name}`)).body.data.expressionErrors;
    const idOf = async (path: string, name: string) => (await api('GET', `${path}/${name}`)).body.data.id as string;
    /** Ids of the fields logged as upserted since `asOf`. */
    const upsertedAfter = async (asOf: string) =>
      (await changesAfter(emu, asOf)).filter((c) => c.kind === 'Field' && c.action === 'upserted').map((c) => c.id);

    beforeAll(async () => {
      await makeTable(emu, 'shop', 'follow', {}, [
        field('n', 'number'),
        field('fx', 'function', { expression: 'nosuch + 1' }),
        field('ok1', 'function', { expression: 'n * 10' }),
        field('quiet', 'function', { expression: 'n + 1' }),
      ]);
    });

    it('creating the field an expression names clears its errors, and logs the field as changed', async () => {
      expect(await errorsOf(t, 'fx')).toEqual([{ line: 1, column: 1, message: 'unknown field nosuch in table follow' }]);
      const asOf = await openPoll(emu);
      expect((await api('POST', t, field('nosuch', 'number'))).status).toBe(201);
      expect(await errorsOf(t, 'fx')).toBeUndefined();
      const upserted = await upsertedAfter(asOf);
      expect(upserted).toContain(await idOf(t, 'fx'));
      // Fields whose errors did not change are not logged.
      expect(upserted).not.toContain(await idOf(t, 'quiet'));
      expect(upserted).not.toContain(await idOf(t, 'ok1'));
    });

    it('renaming a named field gives the expressions that name it errors, and renaming it back clears them', async () => {
      const asOf = await openPoll(emu);
      expect((await api('PATCH', `${t}/n`, { name: 'renamed' })).status).toBe(200);
      expect(await errorsOf(t, 'ok1')).toEqual([{ line: 1, column: 1, message: 'unknown field n in table follow' }]);
      expect(await errorsOf(t, 'quiet')).toEqual([{ line: 1, column: 1, message: 'unknown field n in table follow' }]);
      const upserted = await upsertedAfter(asOf);
      expect(upserted).toEqual(expect.arrayContaining([await idOf(t, 'ok1'), await idOf(t, 'quiet'), await idOf(t, 'renamed')]));
      expect(upserted).not.toContain(await idOf(t, 'fx'));
      expect((await api('PATCH', `${t}/batch`, [{ fieldName: 'renamed', name: 'n' }])).status).toBe(200);
      expect(await errorsOf(t, 'ok1')).toBeUndefined();
      expect(await errorsOf(t, 'quiet')).toBeUndefined();
    });

    it('deleting a named field gives errors; triggers, defaults and selections follow too', async () => {
      expect((await api('POST', `${t}/batch`, [
        field('later', 'number', { onUpdate: 'gone := 1', defaultValue: { $nx: 'gone' } }),
        field('gone', 'number'),
        field('pick', 'dchoice', { options: 'select follow where gone > 0' }),
      ])).status).toBe(201);
      expect(await errorsOf(t, 'later')).toBeUndefined();
      const asOf = await openPoll(emu);
      expect((await api('DELETE', `${t}/gone`)).status).toBe(200);
      expect(await errorsOf(t, 'later')).toEqual([
        { line: 1, column: 1, message: 'onUpdate: unknown field gone in table follow' },
        { line: 1, column: 1, message: 'defaultValue.$nx: unknown field gone in table follow' },
      ]);
      expect(await errorsOf(t, 'pick')).toEqual([{ line: 1, column: 21, message: 'options: unknown field gone in table follow' }]);
      expect(await upsertedAfter(asOf)).toEqual([await idOf(t, 'later'), await idOf(t, 'pick')]);
    });

    it('expressions of other tables that select the table follow its fields and the table itself', async () => {
      const other = fieldsPath('shop', 'watcher');
      await makeTable(emu, 'shop', 'watcher', {}, [
        field('total', 'function', { expression: 'sum((select source).amt)' }),
        field('rows', 'function', { expression: 'count(select source)' }),
      ]);
      expect(await errorsOf(other, 'rows')).toEqual([
        { line: 1, column: 14, message: 'unknown table source (select names a table of the same module)' },
      ]);
      await makeTable(emu, 'shop', 'source');
      expect(await errorsOf(other, 'rows')).toBeUndefined();
      expect(await errorsOf(other, 'total')).toEqual([{ line: 1, column: 21, message: 'unknown field amt in table source' }]);
      const asOf = await openPoll(emu);
      expect((await api('POST', fieldsPath('shop', 'source'), field('amt', 'number'))).status).toBe(201);
      expect(await errorsOf(other, 'total')).toBeUndefined();
      expect(await upsertedAfter(asOf)).toContain(await idOf(other, 'total'));
      expect((await api('PATCH', tablePath('shop', 'source'), { name: 'source2' })).status).toBe(200);
      expect(await errorsOf(other, 'rows')).toHaveLength(1);
      expect((await errorsOf(other, 'total'))[0].message).toBe('unknown table source (select names a table of the same module)');
      expect((await api('PATCH', tablePath('shop', 'source2'), { name: 'source' })).status).toBe(200);
      expect(await errorsOf(other, 'total')).toBeUndefined();
      const beforeDelete = await openPoll(emu);
      expect((await api('DELETE', tablePath('shop', 'source'))).status).toBe(200);
      expect(await errorsOf(other, 'rows')).toHaveLength(1);
      expect(await upsertedAfter(beforeDelete)).toEqual([await idOf(other, 'total'), await idOf(other, 'rows')]);
    });

    it('a table delete also re-checks what named the reference fields it takes along', async () => {
      await makeTable(emu, 'shop', 'target');
      await makeTable(emu, 'shop', 'linking', {}, [field('link', 'reference', { refTableName: 'target' })]);
      await makeTable(emu, 'shop', 'counting', {}, [field('linked', 'function', { expression: 'count(select linking where link > 0)' })]);
      expect(await errorsOf(fieldsPath('shop', 'counting'), 'linked')).toBeUndefined();
      expect((await api('DELETE', tablePath('shop', 'target'))).status).toBe(200);
      expect(await errorsOf(fieldsPath('shop', 'counting'), 'linked')).toEqual([
        { line: 1, column: 28, message: 'unknown field link in table linking' },
      ]);
    });
  });

  describe('dchoice and dmulti (create rules 2, 4; update rules 2, 3, 5)', () => {
    it('a selection of records of the module saves cleanly; display formulas read the selected table', async () => {
      const res = await create(field('buyer', 'dchoice', {
        options: 'select customers where active = true', optionName: 'upper(name)', optionColor: 'if tier > 1 then "#ff0000" else "#00ff00" end',
      }));
      expect(res.status).toBe(201);
      expect(res.body.data).not.toHaveProperty('expressionErrors');
    });

    it('problems of every expression are reported, prefixed by the property that holds them', async () => {
      const res = await create(field('buyers', 'dmulti', { options: 'select customers where activ', optionName: 'title' }));
      expect(res.status).toBe(201);
      expect(res.body.data.expressionErrors).toEqual([
        { line: 1, column: 24, message: 'options: unknown field activ in table customers' },
      ]);
      const display = await create(field('buyers2', 'dmulti', { options: 'select customers', optionName: 'title', optionIcon: 'amount' }));
      expect(display.body.data.expressionErrors).toEqual([
        { line: 1, column: 1, message: 'optionName: unknown field title in table customers' },
        { line: 1, column: 1, message: 'optionIcon: unknown field amount in table customers' },
      ]);
    });

    it('the selection must give records; an unknown table is an error', async () => {
      const notRecords = await create(field('pick_n', 'dchoice', { options: '1 + 1' }));
      expect(notRecords.body.data.expressionErrors).toEqual([
        { line: 1, column: 3, message: 'options: the selection must give records (select TABLE …), not number' },
      ]);
      const unknown = await create(field('pick_u', 'dchoice', { options: 'select suppliers' }));
      expect(unknown.body.data.expressionErrors[0]).toMatchObject({ line: 1, column: 8, message: expect.stringContaining('unknown table suppliers') });
    });

    it('updating the selection re-checks it: 200 with or without expressionErrors', async () => {
      const bad = await patch('buyer', { options: 'select customers where' });
      expect(bad.status).toBe(200);
      expect(bad.body.data.expressionErrors[0].message).toMatch(/^options: expected a value/);
      const good = await patch('buyer', { options: 'select customers', optionName: 'name' });
      expect(good.status).toBe(200);
      expect(good.body.data).not.toHaveProperty('expressionErrors');
    });

    it('wrong-kind option properties on update are 400 (update rule 2)', async () => {
      expect((await patch('amount', { options: 'select customers' })).status).toBe(400);
      expect((await patch('amount', { optionName: 'name' })).status).toBe(400);
      expect((await patch('buyer', { options: [{ name: 'a' }] })).status).toBe(400);
    });
  });

  describe('triggers and $nx defaults', () => {
    it('are checked after the save like function expressions', async () => {
      const good = await create(field('touched', 'string', { onUpdate: 'note := "changed"; touched := text(qty)' }));
      expect(good.status).toBe(201);
      expect(good.body.data).not.toHaveProperty('expressionErrors');
      const bad = await create(field('t2', 'number', { onUpdate: 'total := 1; ghost := 2', defaultValue: { $nx: 'qty +' } }));
      expect(bad.status).toBe(201);
      // Grouped by property (in the order the properties are listed), each group in source order.
      expect(bad.body.data.expressionErrors).toEqual([
        { line: 1, column: 1, message: 'onUpdate: field total is computed (type function) and cannot be assigned' },
        { line: 1, column: 13, message: 'onUpdate: unknown field ghost in table orders' },
        { line: 1, column: 6, message: 'defaultValue.$nx: expected a value (a field, a number, a text, a function call, if or select), found the end of the expression' },
      ]);
    });
  });

  describe('guards (create rules 5-9; update rule 6)', () => {
    it('a guard that does not parse is 400 naming the place, line and column; nothing is created', async () => {
      const before = await snapshot(emu);
      const res = await create(field('g1', 'string', { canRead: 'amount >\n  (1 +' }));
      expect(res.status).toBe(400);
      expect(res.body.error.message).toBe(
        'body.canRead: the guard does not compile: line 2, column 7: expected a value (a field, a number, a text, a function call, if or select), found the end of the expression',
      );
      expect(await snapshot(emu)).toEqual(before);
    });

    it('a guard naming an unknown field or function, or not giving a boolean, is 400', async () => {
      for (const [guard, text] of [
        ['amout > 1', 'line 1, column 1: unknown field amout in table orders'],
        ['isAdmin()', 'line 1, column 1: unknown function isAdmin'],
        ['amount + 1', 'line 1, column 8: a guard must give boolean, not number'],
      ]) {
        const res = await create(field('g2', 'string', { canWrite: guard }));
        expect(res.status, guard).toBe(400);
        expect(res.body.error.message).toBe(`body.canWrite: the guard does not compile: ${text}`);
      }
    });

    it('a guard cannot name the field being created, nor another field of the batch', async () => {
      const self = await create(field('secret', 'string', { canRead: 'secret = null' }));
      expect(self.status).toBe(400);
      expect(self.body.error.message).toContain('line 1, column 1: field secret is created by this request and not in scope yet');
      const before = await snapshot(emu);
      const batch = await api('POST', `${path}/batch`, [field('x1', 'string'), field('x2', 'string', { canRead: 'x1 = "a"' })]);
      expect(batch.status).toBe(400);
      expect(batch.body.error.message).toContain('body[1].canRead');
      expect(await snapshot(emu)).toEqual(before);
    });

    it('a following update may name the field itself, and sees renames of the same batch', async () => {
      expect((await create(field('secret', 'string'))).status).toBe(201);
      expect((await patch('secret', { canRead: 'secret != "hidden"' })).status).toBe(200);
      const batch = await api('PATCH', `${path}/batch`, [
        { fieldName: 'note', name: 'remark' },
        { fieldName: 'secret', canWrite: 'remark = null' },
      ]);
      expect(batch.status, JSON.stringify(batch.body)).toBe(200);
      const stale = await api('PATCH', `${path}/batch`, [{ fieldName: 'secret', canWrite: 'note = null' }]);
      expect(stale.status).toBe(400);
      expect(stale.body.error.message).toContain('unknown field note');
    });

    it('one bad guard in an update batch changes nothing', async () => {
      const before = await snapshot(emu);
      const res = await api('PATCH', `${path}/batch`, [{ fieldName: 'qty', canRead: 'true' }, { fieldName: 'amount', canRead: 'qty >' }]);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('body[1].canRead: the guard does not compile: line 1, column 6');
      expect(await snapshot(emu)).toEqual(before);
    });

    it('canWrite is refused on computed types, canRead accepted on every type', async () => {
      const res = await create(field('fw', 'function', { expression: '1', canWrite: 'true' }));
      expect(res.status).toBe(400);
      expect((await patch('total', { canWrite: 'true' })).status).toBe(400);
      expect((await patch('total', { canRead: 'amount > 0' })).status).toBe(200);
    });

    it('null removes a guard', async () => {
      expect((await patch('qty', { canRead: 'qty > 0' })).body.data.canRead).toBe('qty > 0');
      expect((await patch('qty', { canRead: null })).body.data).not.toHaveProperty('canRead');
    });

    it('guards need the grant schema:manage-permissions', async () => {
      const res = await api('POST', path, field('g3', 'string', { canRead: 'true' }), 'schema-only');
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain('schema:manage-permissions');
      const upd = await api('PATCH', `${path}/qty`, { canWrite: 'true' }, 'schema-only');
      expect(upd.status).toBe(403);
    });
  });
});
