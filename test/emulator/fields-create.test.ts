import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CREATABLE_FIELD_TYPES, FIELD_TYPES, endpoints } from '../../src/api/index.ts';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { changesAfter, field, fieldsPath, makeModule, makeTable, openPoll } from '../helpers/schema.ts';

/** The least a create body of each creatable type needs. */
function minimal(name: string, type: string) {
  const extra: Record<string, unknown> = {};
  if (type === 'dchoice' || type === 'dmulti') extra.options = 'select targets';
  if (type === 'function') extra.expression = '1 + 1';
  if (type === 'reference' || type === 'reverse') extra.refTableName = 'targets';
  return field(name, type, extra);
}

describe('creating fields', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof apiOf>;
  const path = fieldsPath('crm', 'things');
  const create = (body: unknown) => api('POST', path, body);

  beforeAll(async () => {
    emu = await startEmulator();
    api = apiOf(emu);
    await makeModule(emu, 'crm');
    await makeModule(emu, 'ops');
    await makeTable(emu, 'crm', 'targets');
    await makeTable(emu, 'crm', 'things');
    await makeTable(emu, 'ops', 'elsewhere');
  });
  afterAll(() => emu.close());

  it.each(CREATABLE_FIELD_TYPES.map((t) => [t]))('creates a %s field: 201 with the field', async (type) => {
    const res = await create(minimal(`t_${type}`, type));
    expect(res.status).toBe(201);
    expect(endpoints.createField.response.safeParse(res.body).success).toBe(true);
    expect(res.body.data).toMatchObject({ id: expect.stringMatching(/^f[0-9]+$/), name: `t_${type}`, type, labels: { '': `t_${type}` } });
    expect((await api('GET', `${path}/t_${type}`)).body.data).toEqual(res.body.data);
  });

  it.each(FIELD_TYPES.filter((t) => !(CREATABLE_FIELD_TYPES as readonly string[]).includes(t)).map((t) => [t]))(
    'refuses the internal type %s with 400', async (type) => {
      const res = await create(field(`i_${type.toLowerCase()}`, type));
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain('body.type');
      expect((await api('GET', `${path}/i_${type.toLowerCase()}`)).status).toBe(404);
    },
  );

  it('fills documented defaults: flags false, string variant text, no roles, no guards', async () => {
    const res = await create(field('plain', 'string'));
    expect(res.body.data).toEqual({
      id: expect.any(String), name: 'plain', type: 'string', labels: { '': 'plain' }, variant: 'text',
      required: false, unique: false, index: false, search: false,
    });
  });

  // Every given property kept and GET agreeing: fields.create.properties of the conformance suite.
  it('stores the role user as editor, and accepts showInTable without returning it', async () => {
    const res = await create(field('full', 'string', { readRoles: ['admin', 'user'], showInTable: false }));
    expect(res.status).toBe(201);
    expect(res.body.data.readRoles).toEqual(['admin', 'editor']);
    expect(res.body.data).not.toHaveProperty('showInTable');
  });

  it('appends new fields after the existing ones', async () => {
    await create(field('zz_last', 'number'));
    const names = (await api('GET', path)).body.data.map((f: any) => f.name);
    expect(names.at(-1)).toBe('zz_last');
    expect(names.indexOf('plain')).toBeLessThan(names.indexOf('full'));
  });

  // The 400s: errors.missing-required-400 and fields.create.request-limits-400 of the conformance suite.
  describe('labels', () => {
    it.each([
      [{ name: 'nolabels', type: 'string' }, 'body.labels'],
      [field('emptylabel', 'string', { labels: { '': '' } }), 'body.labels'],
      [field('longlabel', 'string', { labels: { '': 'x'.repeat(101) } }), 'body.labels'],
    ])('the message for %j names %s', async (body, where) => {
      expect((await create(body)).body.error.message).toContain(where);
    });
  });

  describe('choice and multi (rule 1)', () => {
    it('gives every option a stable id, returned by create and by GET', async () => {
      const res = await create(field('status', 'choice', {
        options: [{ name: 'open', color: '#00ff00', labels: { de: 'offen' } }, { name: 'closed', order: 5, icon: 'lock' }],
      }));
      expect(res.status).toBe(201);
      const [open, closed] = res.body.data.options;
      expect(open).toEqual({ id: expect.stringMatching(/^o[0-9]+$/), name: 'open', order: 0, color: '#00ff00', labels: { de: 'offen' } });
      expect(closed).toEqual({ id: expect.stringMatching(/^o[0-9]+$/), name: 'closed', order: 5, icon: 'lock' });
      expect(open.id).not.toBe(closed.id);
      expect((await api('GET', `${path}/status`)).body.data.options).toEqual(res.body.data.options);
      const multi = await create(field('tags', 'multi', { options: [{ name: 'a' }] }));
      expect(multi.body.data.options[0].id).not.toBe(open.id);
      expect(multi.body.data.options[0].id).not.toBe(closed.id);
    });

    it('starts with no options when none are given', async () => {
      expect((await create(field('nochoice', 'choice'))).body.data.options).toEqual([]);
    });

    // An empty name, an order below 0 and another property are also fields.create.request-limits-400.
    it.each([
      [{ options: [{ id: 'o1', name: 'x' }] }, 'id'],
      [{ options: [{ name: 'x' }, { name: 'x' }] }, 'duplicate'],
      [{ options: [{ name: '' }] }, 'option name'],
      [{ options: [{ name: 'x', order: -1 }] }, 'order'],
      [{ options: [{ name: 'x', extra: 1 }] }, 'extra'],
      [{ options: 'select targets' }, 'options expression'],
    ])('answers 400 for options %j', async (extra, text) => {
      const res = await create(field('badchoice', 'choice', extra));
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(text);
    });
  });

  describe('dchoice and dmulti (rule 2)', () => {
    // The expressions kept: fields.create.expressions of the conformance suite.
    it.each([
      ['dchoice', {}, 'required'],
      ['dmulti', { options: [{ name: 'a' }] }, 'options array'],
      ['choice', { optionName: 'name' }, 'optionName'],
      ['string', { optionIcon: 'icon' }, 'optionIcon'],
      ['multi', { optionColor: 'c' }, 'optionColor'],
      ['string', { options: [{ name: 'a' }] }, 'options array'],
      ['number', { options: 'select targets' }, 'options expression'],
    ])('%s with %j answers 400', async (type, extra, text) => {
      const res = await create(field('wrongopts', type, extra));
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(text);
    });
  });

  describe('function (rules 3, 4)', () => {
    // The expression kept: fields.create.expressions of the conformance suite.
    it('expression is required, and only for function fields', async () => {
      expect((await create(field('noexpr', 'function'))).status).toBe(400);
      const wrong = await create(field('strexpr', 'string', { expression: '1' }));
      expect(wrong.status).toBe(400);
      expect(wrong.body.error.message).toContain('body.expression');
    });
  });

  describe('guards (rules 5, 6, 8)', () => {
    // Guards kept as given: fields.create.properties of the conformance suite.
    it.each(['(', ')', '(a = 1', 'a = 1)', '"unterminated', "'x", '   '])(
      'answers 400 for the uncompilable guard %j, and creates nothing', async (guard) => {
        for (const prop of ['canRead', 'canWrite']) {
          const res = await create(field('badguard', 'string', { [prop]: guard }));
          expect(res.status).toBe(400);
          expect(res.body.error.message).toContain(`body.${prop}`);
        }
        expect((await api('GET', `${path}/badguard`)).status).toBe(404);
      },
    );

    it('refuses an empty guard', async () => {
      expect((await create(field('emptyguard', 'string', { canRead: '' }))).status).toBe(400);
    });

    // canWrite refused on computed types: fields.create.can-write-computed-400 of the conformance suite.
    it.each(['function', 'reverse'])('the message for canWrite on a %s field names canWrite', async (type) => {
      expect((await create({ ...minimal(`cw_${type}`, type), canWrite: 'true' })).body.error.message).toContain('canWrite');
    });

    // A guard naming the new field (400) or another one (201): fields.create.guard-self-400 of the
    // conformance suite. The emulator's own: the message, this.field, and a name inside a string.
    it('a guard naming the field being created is out of scope, also as this.field, not inside a string', async () => {
      const self = await create(field('secret', 'string', { canRead: 'secret != ""' }));
      expect(self.body.error.message).toMatch(/secret.*not in scope/);
      const viaThis = await create(field('secret', 'string', { canWrite: 'this.secret = null' }));
      expect(viaThis.status).toBe(400);
      const inString = await create(field('secret', 'string', { canRead: '"secret" = "secret"' }));
      expect(inString.status).toBe(201);
    });
  });

  describe('reference and reverse', () => {
    // refTableId in the answer, a table referencing itself: fields.create.reference of the conformance suite.
    it.each(['reference', 'reverse'])('%s: the answer has refTableId and no refTableName', async (type) => {
      const res = await create(field(`ref_${type}`, type, { refTableName: 'targets' }));
      expect(res.status).toBe(201);
      expect(res.body.data).not.toHaveProperty('refTableName');
    });

    it.each([
      [{ refTableName: 'nope' }, 'not found'],
      [{ refTableName: 'elsewhere' }, 'not found in module crm'],
      [{}, 'required'],
      [{ refTableName: null }, 'required'],
      [{ refTableName: 'Bad' }, 'refTableName'],
    ])('answers 400 for %j', async (extra, text) => {
      const res = await create(field('badref', 'reference', extra));
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(text);
    });

    it('refuses refTableName on other types, accepts null there', async () => {
      expect((await create(field('strref', 'string', { refTableName: 'targets' }))).status).toBe(400);
      expect((await create(field('strnull', 'string', { refTableName: null }))).status).toBe(201);
    });
  });

  describe('default values', () => {
    it('checks literals against the type and stores them in canonical form', async () => {
      expect((await create(field('dnum', 'number', { defaultValue: 3 }))).body.data.defaultValue).toBe(3);
      expect((await create(field('dts', 'timestamp', { defaultValue: '2026-01-02T03:04Z' }))).body.data.defaultValue)
        .toBe('2026-01-02T03:04:00.000Z');
      const bad = await create(field('dbad', 'number', { defaultValue: 'abc' }));
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('body.defaultValue');
      expect((await create(field('dbool', 'boolean', { defaultValue: 1 }))).status).toBe(400);
    });

    it('names choice and multi options by id or name, stored as ids', async () => {
      const c = await create(field('dchoiceopt', 'choice', { options: [{ name: 'a' }, { name: 'b' }], defaultValue: 'b' }));
      expect(c.body.data.defaultValue).toBe(c.body.data.options[1].id);
      const m = await create(field('dmultiopt', 'multi', { options: [{ name: 'a' }, { name: 'b' }], defaultValue: ['a', 'b'] }));
      expect(m.body.data.defaultValue).toEqual(m.body.data.options.map((o: any) => o.id));
      const bad = await create(field('dchoicebad', 'choice', { options: [{ name: 'a' }], defaultValue: 'z' }));
      expect(bad.status).toBe(400);
      expect(bad.body.error.message).toContain('not an option');
    });

    it('stores { $nx } expressions as given; computed types take no default', async () => {
      const res = await create(field('dnx', 'timestamp', { defaultValue: { $nx: 'now()' } }));
      expect(res.body.data.defaultValue).toEqual({ $nx: 'now()' });
      expect((await create({ ...minimal('dfn', 'function'), defaultValue: 1 })).status).toBe(400);
      expect((await create(field('dnxbad', 'string', { defaultValue: { $nx: 'x', y: 1 } }))).status).toBe(400);
    });
  });

  describe('other rules', () => {
    it('answers 400 for a field that already exists', async () => {
      const res = await create(field('plain', 'number'));
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/plain already exists/);
    });

    // An unknown module or table: fields.create.unknown-table-404 of the conformance suite.
    it('answers 404 for an unknown workspace', async () => {
      const body = field('x', 'string');
      expect((await api('POST', '/api/v1/workspace/nope00000001/modules/crm/tables/things/fields', body)).status).toBe(404);
    });

    it.each([
      [{ variant: 'email' }, 'number', 'variant'],
      [{ variant: 'fancy' }, 'string', 'variant'],
      [{ readRoles: [] }, 'string', 'readRoles'],
      [{ writeRoles: ['admin', 'editor', 'user', 'admin'] }, 'string', 'writeRoles'],
      [{ readRoles: ['owner'] }, 'string', 'readRoles'],
      [{ colour: 'red' }, 'string', 'colour'],
      [{ name: 'Bad Name' }, 'string', 'body.name'],
    ])('answers 400 for %j on a %s field', async (extra, type, text) => {
      const res = await create({ ...field('other', type), ...extra });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toContain(text);
    });

    it('logs a Field upserted change', async () => {
      const poll = await openPoll(emu);
      const res = await create(field('logged', 'string'));
      const changes = await changesAfter(emu, poll);
      expect(changes).toEqual([{ id: res.body.data.id, kind: 'Field', action: 'upserted', changedAt: expect.any(String) }]);
    });
  });
});
