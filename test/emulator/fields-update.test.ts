import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints } from '../../src/api/index.ts';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { changesAfter, field, fieldsPath, makeModule, makeTable, openPoll } from '../helpers/schema.ts';

describe('updating fields', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const path = fieldsPath('crm', 'things');
  const patch = (name: string, body: unknown) => api('PATCH', `${path}/${name}`, body);
  const get = async (name: string) => (await api('GET', `${path}/${name}`)).body.data;

  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeTable(emu, 'crm', 'things', {}, [
      field('title', 'string'),
      field('status', 'choice', { options: [{ name: 'open' }, { name: 'doing' }, { name: 'done' }], defaultValue: 'open' }),
      field('tags', 'multi', { options: [{ name: 'a' }, { name: 'b' }], defaultValue: ['a', 'b'] }),
      field('pick', 'dchoice', { options: 'select things', optionName: 'title' }),
      field('total', 'function', { expression: '1 + 1' }),
      field('back', 'reverse', { refTableName: 'things' }),
      field('amount', 'number', { canRead: 'true', canWrite: 'true' }),
    ]);
  });
  afterAll(() => emu.close());

  // The properties set, GET agreeing, a rename keeping the id and 400 onto an existing name:
  // fields.update.properties and fields.update.rename of the conformance suite.
  it('labels replace the whole map', async () => {
    expect((await patch('title', { labels: { '': 'Title', fr: 'Titre' } })).body.data.labels).toEqual({ '': 'Title', fr: 'Titre' });
    expect((await patch('title', { labels: { fr: 'Titre' } })).body.data.labels).toEqual({ fr: 'Titre' });
  });

  it('a rename onto an existing name names it; renaming to its own name is fine', async () => {
    expect((await patch('title', { name: 'heading' })).status).toBe(200);
    const clash = await patch('heading', { name: 'status' });
    expect(clash.status).toBe(400);
    expect(clash.body.error.message).toMatch(/status already exists/);
    expect((await patch('heading', { name: 'heading' })).status).toBe(200);
  });

  it('answers 404 for an unknown field, table or module', async () => {
    const res = await patch('nope', { required: true });
    expect(res.status).toBe(404);
    expect(res.body.error.message).toContain('nope');
    expect((await api('PATCH', `${fieldsPath('crm', 'nope')}/status`, { required: true })).status).toBe(404);
    expect((await api('PATCH', `${fieldsPath('nope', 'things')}/status`, { required: true })).status).toBe(404);
  });

  describe('choice options (rule 1)', () => {
    it('replace the whole list: kept options keep their id, new ones get one, missing ones go', async () => {
      const [open, doing, done] = (await get('status')).options;
      const res = await patch('status', {
        options: [{ id: done.id, name: 'finished', color: '#00aa00' }, { name: 'blocked' }, { id: open.id, name: 'open', order: 9 }],
      });
      expect(res.status).toBe(200);
      const options = res.body.data.options;
      expect(options).toEqual([
        { id: done.id, name: 'finished', order: 0, color: '#00aa00' },
        { id: expect.stringMatching(/^o[0-9]+$/), name: 'blocked', order: 1 },
        { id: open.id, name: 'open', order: 9 },
      ]);
      expect([open.id, doing.id, done.id]).not.toContain(options[1].id);
      expect(options.map((o: any) => o.id)).not.toContain(doing.id);
      expect((await get('status')).options).toEqual(options);
    });

    it('answer 400 for an id that is not an option of the field, a repeated id or a repeated name', async () => {
      const tags = (await get('tags')).options;
      const current = (await get('status')).options;
      for (const options of [
        [{ id: 'o999', name: 'x' }],
        [{ id: tags[0].id, name: 'x' }],
        [{ id: current[0].id, name: 'x' }, { id: current[0].id, name: 'y' }],
        [{ name: 'x' }, { name: 'x' }],
      ]) {
        const res = await patch('status', { options });
        expect(res.status, JSON.stringify(options)).toBe(400);
        expect(res.body.error.message).toContain('body.options');
      }
      expect((await get('status')).options).toEqual(current);
    });

    it('drop default option ids that the new list removes', async () => {
      const tags = (await get('tags')).options;
      expect((await get('tags')).defaultValue).toEqual([tags[0].id, tags[1].id]);
      const res = await patch('tags', { options: [{ id: tags[1].id, name: 'b' }] });
      expect(res.body.data.defaultValue).toEqual([tags[1].id]);
      const status = await get('status');
      expect(status.defaultValue).toBe(status.options.find((o: any) => o.name === 'open').id);
      const cleared = await patch('status', { options: [{ name: 'fresh' }] });
      expect(cleared.body.data).not.toHaveProperty('defaultValue');
    });
  });

  describe('wrong-kind options (rule 2)', () => {
    it.each([
      ['heading', { options: [{ name: 'x' }] }, 'options array'],
      ['pick', { options: [{ name: 'x' }] }, 'options array'],
      ['status', { options: 'select things' }, 'options expression'],
      ['heading', { options: 'select things' }, 'options expression'],
      ['status', { optionName: 'title' }, 'optionName'],
      ['heading', { optionIcon: 'x' }, 'optionIcon'],
      ['tags', { optionColor: 'x' }, 'optionColor'],
    ])('%s with %j: the message names %s', async (name, body, text) => {
      // The 400 and the unchanged field: fields.update.options-wrong-kind-400 of the conformance suite.
      expect((await patch(name, body)).body.error.message).toContain(text);
    });
  });

  describe('dynamic choices and functions (rules 3, 4, 5)', () => {
    // Updating the expressions: fields.update.expressions of the conformance suite.
    it('expression on a field other than a function answers 400 naming it', async () => {
      const res = await patch('amount', { expression: '1' });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('body.expression');
    });
  });

  describe('guards (rule 6)', () => {
    // null removing a guard, a guard naming its own field, 400 and the old guard kept, canWrite on
    // computed fields: fields.update.guards of the conformance suite.
    it('the 400 of an uncompilable guard names body.canWrite', async () => {
      const res = await patch('amount', { canWrite: '(amount' });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('body.canWrite');
    });
  });

  describe('other properties', () => {
    it('sets roles (user stored as editor), default values and onUpdate', async () => {
      const res = await patch('amount', { readRoles: ['user'], writeRoles: ['admin'], defaultValue: 5, onUpdate: 'x := 1' });
      expect(res.body.data).toMatchObject({ readRoles: ['editor'], writeRoles: ['admin'], defaultValue: 5, onUpdate: 'x := 1' });
      const cleared = await patch('amount', { defaultValue: null, onUpdate: '' });
      expect(cleared.body.data).not.toHaveProperty('defaultValue');
      expect(cleared.body.data).not.toHaveProperty('onUpdate');
      expect((await patch('amount', { defaultValue: 'many' })).status).toBe(400);
    });

    it.each([
      [{ type: 'number' }, 'type'],
      [{ refTableName: 'things' }, 'refTableName'],
      [{ variant: 'email' }, 'variant'],
      [{ fieldName: 'amount' }, 'fieldName'],
      [{ showInTable: true }, 'showInTable'],
      [{ required: 'yes' }, 'body.required'],
      [{ labels: { '': '' } }, 'body.labels'],
    ])('answers 400 for %j', async (body, text) => {
      const res = await patch('amount', body);
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(text);
    });

    it('logs Field upserted for a change and nothing for a no-op', async () => {
      const poll = await openPoll(emu);
      const amount = await get('amount');
      await patch('amount', { required: amount.required });
      expect(await changesAfter(emu, poll)).toEqual([]);
      await patch('amount', { required: !amount.required });
      expect(await changesAfter(emu, poll)).toEqual([
        { id: amount.id, kind: 'Field', action: 'upserted', changedAt: expect.any(String) },
      ]);
    });
  });
});
