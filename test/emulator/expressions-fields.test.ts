import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, fieldsPath, makeModule, makeTable, snapshot } from '../helpers/schema.ts';

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
      const since = (await api('GET', 'schema/changes?since=1970-01-01T00:00Z')).body.meta.asOf;
      const resent = await api('PATCH', `${t}/f`, { expression: 'n * 2' });
      expect(resent.status).toBe(200);
      expect(resent.body.data.expressionErrors).toEqual([{ line: 1, column: 3, message: '* takes numbers, not text and number' }]);
      // The field changed (it has errors now), so a schema poll sees it.
      const changes = (await api('GET', `schema/changes?since=${since}`)).body.data;
      expect(changes.map((c: any) => c.id)).toContain(resent.body.data.id);
      // And once n is a number again, resending clears them.
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
