import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { postCsv } from '../helpers/csv-upload.ts';
import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field, ok, recordsPath } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * Every option of the import form and every mode: defaults, header or positions, mappings and
 * their validation, number formats, keys (composite too), counts, batches, the rollback of the
 * whole import on one bad row, and the record changes an import leaves.
 */

let emu: RunningEmulator;
let ws: UpstreamWorkspace;
let api: ReturnType<typeof apiOf>;
const M = 'shop';

beforeAll(async () => {
  emu = await startEmulator();
  ws = new UpstreamWorkspace(emu);
  api = apiOf(emu);
  await ws.createModule(M);
  await ws.createTable(M, 'orgs');
  await ws.createTable(M, 'people', { hasHistory: true }, [
    field('name', 'string', { required: true }),
    field('email', 'string', { unique: true }),
    field('age', 'number'),
    field('vip', 'boolean'),
    field('stage', 'choice', { options: [{ name: 'lead' }, { name: 'client' }], defaultValue: 'lead' }),
    field('tags', 'multi', { options: [{ name: 'red' }, { name: 'blue' }] }),
    field('born', 'date'),
    field('org', 'reference', { refTableName: 'orgs' }),
    field('label', 'function', { expression: 'upper(name)' }),
    field('city', 'string'),
  ]);
});
afterAll(() => emu.close());

beforeEach(async () => {
  const ids = (await ws.allRecords(M, 'people')).map((r) => r.id);
  if (ids.length > 0) await ws.deleteRecords(M, 'people', ids);
});

const people = () => ws.allRecords(M, 'people');
const values = async () => (await people()).map((r) => r.values);
const csv = (file: string, parts: Record<string, string> = {}) => postCsv(emu, M, 'people', file, parts);
const mappings = (...m: [string, string, string?][]) =>
  JSON.stringify(m.map(([csvColumnName, fieldName, updatePolicy]) => ({ csvColumnName, fieldName, ...(updatePolicy ? { updatePolicy } : {}) })));

async function optionIds() {
  const table = await ws.getTable(M, 'people');
  const ids: Record<string, string> = {};
  for (const f of table.fields) for (const o of Array.isArray(f.options) ? f.options : []) ids[o.name] = o.id;
  return ids;
}

describe('defaults: header row, comma, append, us numbers', () => {
  it('maps header names to fields ignoring case and converts each type like a create', async () => {
    const org = (await ws.createRecords(M, 'orgs', [{}]))[0]!;
    const res = await csv(`Name,EMAIL,Age,vip,stage,tags,born,org\nAnn,ann@x,"1,234.5",yes,client,"red, blue",2001-02-03,${org}\nBob,bob@x,-7,FALSE,,[],,\n`);
    expect(res.body).toEqual({ data: { rowsImported: 2, rowsUpdated: 0, rowsSkipped: 0 } });
    const opt = await optionIds();
    expect(await values()).toEqual([
      { name: 'Ann', email: 'ann@x', age: 1234.5, vip: true, stage: opt.client, tags: [opt.red, opt.blue], born: '2001-02-03', org: Number(org), label: 'ANN', city: null },
      // An empty cell is an absent value on create: the default of stage applies.
      { name: 'Bob', email: 'bob@x', age: -7, vip: false, stage: opt.lead, tags: [], born: null, org: null, label: 'BOB', city: null },
    ]);
  });

  it.each([
    ['age', '1,23', 'line 2, column 2 ("age"): expected a number in the us format, such as 1,234.5'],
    ['vip', 'maybe', 'line 2, column 2 ("vip"): expected true or false (also yes or no, 1 or 0)'],
    ['stage', 'nope', 'line 2, column 2 ("stage"): "nope" is not an option of field stage'],
    ['born', '2001-02-30', 'line 2, column 2 ("born"): expected a calendar date YYYY-MM-DD'],
    ['org', '999', 'line 2, column 2 ("org"): record 999 does not exist'],
  ])('a bad %s value is a 400 naming line and column, through the create checks', async (name, cell, message) => {
    const res = await csv(`name,${name}\nx,"${cell}"\n`);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(message);
    expect(await people()).toEqual([]);
  });

  it('required and unique are checked like a create, across the file and against the table', async () => {
    await ws.createRecords(M, 'people', [{ name: 'Old', email: 'old@x' }]);
    const res = await csv('name,email\n,a@x\nB,old@x\nC,c@x\nD,c@x\n');
    expect(res.status).toBe(400);
    const message = res.body.error.message as string;
    expect(message).toContain('line 2, column 1 ("name"): field name is required');
    const second = await csv('name,email\nB,old@x\nC,c@x\nD,c@x\n');
    expect(second.body.error.message).toContain('line 2, column 2 ("email"): value "old@x" of unique field email already exists in record');
    expect(second.body.error.message).toContain('line 4, column 2 ("email"): value "c@x" of unique field email repeats line 3');
    expect(await values()).toEqual([expect.objectContaining({ name: 'Old' })]);
  });

  it('a header column that matches no field is a 400 naming it', async () => {
    const res = await csv('name,shoe size\nx,42\n');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/header: column "shoe size" matches no field of table shop\.people .*send mappings/);
  });

  it('a computed field cannot be imported', async () => {
    const res = await csv('name,label\nx,y\n');
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('field label of table shop.people is of type function');
  });
});

it('canWrite guards apply to imported values, with the request\'s key (403, nothing written)', async () => {
  await ws.createTable(M, 'guarded', {}, [field('title', 'string'), field('secret', 'string', { canWrite: 'false' })]);
  const res = await postCsv(emu, M, 'guarded', 'title,secret\na,b\n');
  expect(res.status).toBe(403);
  expect(res.body.error.message).toContain('line 2, column 2 ("secret"): canWrite of field secret denies this write');
  expect(await ws.allRecords(M, 'guarded')).toEqual([]);
});

describe('hasHeader=false', () => {
  it('maps columns by position to the writable fields in field order (computed ones skipped)', async () => {
    const res = await csv('Ann,ann@x,30\nBob,bob@x,31\n', { hasHeader: 'false' });
    expect(res.body).toEqual({ data: { rowsImported: 2, rowsUpdated: 0, rowsSkipped: 0 } });
    expect((await values()).map((v) => [v.name, v.email, v.age])).toEqual([['Ann', 'ann@x', 30], ['Bob', 'bob@x', 31]]);
  });

  it('names columns 1, 2, … in mappings', async () => {
    const res = await csv('30,Ann,ignored\n', { hasHeader: 'false', mappings: mappings(['2', 'name'], ['1', 'age']) });
    expect(res.status).toBe(200);
    expect((await values()).map((v) => [v.name, v.age])).toEqual([['Ann', 30]]);
    const bad = await csv('30,Ann\n', { hasHeader: 'false', mappings: mappings(['name', 'name']) });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('form.mappings[0].csvColumnName: without a header row columns are named by position, 1 to 2');
  });

  it('more columns than writable fields is a 400', async () => {
    const res = await csv('a,b,c,d,e,f,g,h,i,j\n', { hasHeader: 'false' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('the file has 10 columns but table shop.people has 9 writable fields');
  });
});

describe('options', () => {
  it('an explicit delimiter wins over detection', async () => {
    // Detection would take the semicolon; the comma named by the request makes one column.
    const res = await csv('name;x\na;b\n', { delimiter: ',', mappings: mappings(['name;x', 'name']) });
    expect(res.status).toBe(200);
    expect((await values())[0]!.name).toBe('a;b');
  });

  it('the European number format reads 1.234,5 and 1 234,5 and refuses the US form', async () => {
    const res = await csv('name;age\na;1.234,5\nb;1 234,5\nc;-0,25\nd;12\n', { numberFormat: 'eu' });
    expect(res.status).toBe(200);
    expect((await values()).map((v) => v.age)).toEqual([1234.5, 1234.5, -0.25, 12]);
    const us = await csv('name;age\na;1,234.5\n', { numberFormat: 'eu' });
    expect(us.body.error.message).toContain('line 2, column 2 ("age"): expected a number in the eu format, such as 1.234,5');
  });

  it('mappings read only the mapped columns', async () => {
    const res = await csv('Full name,Mail,Junk\nAnn,ann@x,zzz\n', { mappings: mappings(['full name', 'name'], ['Mail', 'email']) });
    expect(res.status).toBe(200);
    expect((await values()).map((v) => [v.name, v.email])).toEqual([['Ann', 'ann@x']]);
  });

  it.each([
    [{ mappings: 'not json' }, 'form.mappings: must be a JSON array'],
    [{ mappings: '[]' }, 'form.mappings: mappings must hold at least 1 mapping'],
    [{ mappings: JSON.stringify([{ csvColumnName: 'name', fieldName: 'name', extra: 1 }]) }, 'form.mappings[0]: unknown property "extra"'],
    [{ mappings: JSON.stringify([{ csvColumnName: 'name', fieldName: 'name', updatePolicy: 'maybe' }]) }, 'form.mappings[0].updatePolicy'],
    [{ mappings: mappings(['name', 'name'], ['email', 'name']) }, 'form.mappings[1].fieldName: field name is mapped twice'],
    [{ mappings: mappings(['name', 'nope']) }, 'form.mappings[0].fieldName: table shop.people has no field nope'],
    [{ mappings: mappings(['nope', 'name']) }, 'form.mappings[0].csvColumnName: the header has no column "nope"'],
    [{ hasHeader: 'yes' }, 'form.hasHeader: must be true or false'],
    [{ delimiter: ',,' }, 'form.delimiter: delimiter must be one character'],
    [{ delimiter: '"' }, 'form.delimiter: must differ from quoteChar'],
    [{ quoteChar: ',' }, 'form.quoteChar: "," is one of the delimiters detection looks for, and the file has none of the others: the quote character must not be the delimiter; send the delimiter part, or another quoteChar'],
    [{ encoding: 'ebcdic' }, 'form.encoding: must be one of utf8, utf16le, latin1'],
    [{ importMode: 'merge' }, 'form.importMode: must be one of append, update, upsert'],
    [{ numberFormat: 'fr' }, 'form.numberFormat: must be one of us, eu'],
    [{ batchSize: '0' }, 'form.batchSize: must be 1 to 10000'],
    [{ batchSize: 'ten' }, 'form.batchSize: must be an integer'],
    [{ importMode: 'update' }, 'form.mappings: importMode update needs mappings with at least one updatePolicy "key"'],
    [{ colour: 'red' }, 'form: unknown part "colour"'],
  ])('refuses %j with 400: %s', async (parts, message) => {
    const res = await csv('name,email\nx,x@x\n', parts);
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain(message);
    expect(await people()).toEqual([]);
  });

  it('refuses a form without a file part, or with the file as a plain text part', async () => {
    const missing = await postCsv(emu, M, 'people', undefined, { importMode: 'append' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.message).toContain('form.file: missing');
    const asText = await postCsv(emu, M, 'people', undefined, { file: 'name\nx\n' } as Record<string, string>);
    expect(asText.status).toBe(400);
    expect(asText.body.error.message).toContain('form.file: send the CSV as a file part (with a filename)');
  });
});

describe('update and upsert', () => {
  const keyed = (mode: string, ...m: [string, string, string?][]) => ({ importMode: mode, mappings: mappings(...m) });

  it('update changes the records matched by the key, skips rows matching none, and counts both', async () => {
    await ws.createRecords(M, 'people', [{ name: 'Ann', email: 'ann@x', age: 1, city: 'Oslo' }, { name: 'Bob', email: 'bob@x', age: 2, city: 'Rome' }]);
    const res = await csv('email,age,city\nbob@x,20,\nzed@x,99,Nowhere\n', keyed('update', ['email', 'email', 'key'], ['age', 'age'], ['city', 'city']));
    expect(res.body).toEqual({ data: { rowsImported: 0, rowsUpdated: 1, rowsSkipped: 1 } });
    expect((await values()).map((v) => [v.email, v.age, v.city])).toEqual([['ann@x', 1, 'Oslo'], ['bob@x', 20, null]]);
  });

  it('ignoreEmpty keeps the stored value where the cell is empty', async () => {
    await ws.createRecords(M, 'people', [{ name: 'Bob', email: 'bob@x', age: 2, city: 'Rome' }]);
    const res = await csv('email,age,city\nbob@x,,Paris\n', keyed('update', ['email', 'email', 'key'], ['age', 'age', 'ignoreEmpty'], ['city', 'city']));
    expect(res.body.data.rowsUpdated).toBe(1);
    expect((await values()).map((v) => [v.age, v.city])).toEqual([[2, 'Paris']]);
  });

  it('upsert updates matches and creates the rest, with a composite key', async () => {
    await ws.createRecords(M, 'people', [{ name: 'Ann', city: 'Oslo', age: 1 }, { name: 'Ann', city: 'Rome', age: 2 }]);
    const res = await csv(
      'name,city,age\nAnn,Rome,20\nAnn,Paris,30\nBob,Oslo,40\n',
      keyed('upsert', ['name', 'name', 'key'], ['city', 'city', 'key'], ['age', 'age']),
    );
    expect(res.body).toEqual({ data: { rowsImported: 2, rowsUpdated: 1, rowsSkipped: 0 } });
    expect((await values()).map((v) => [v.name, v.city, v.age])).toEqual([
      ['Ann', 'Oslo', 1], ['Ann', 'Rome', 20], ['Ann', 'Paris', 30], ['Bob', 'Oslo', 40],
    ]);
  });

  it('keys are compared in stored form: a choice by option name, a number in the file\'s format', async () => {
    await ws.createRecords(M, 'people', [{ name: 'A', stage: 'client', age: 1234.5 }]);
    const res = await csv('stage;age;city\nclient;1.234,5;Bonn\n', {
      numberFormat: 'eu', ...keyed('update', ['stage', 'stage', 'key'], ['age', 'age', 'key'], ['city', 'city']),
    });
    expect(res.body.data.rowsUpdated).toBe(1);
    expect((await values())[0]!.city).toBe('Bonn');
  });

  it.each([
    ['within a batch', '100'],
    ['across batches', '1'],
  ])('a key repeated in the file (%s) is a 400 naming both lines', async (_case, batchSize) => {
    const res = await csv('name,email\nA,a@x\nB,b@x\nC,a@x\n', { batchSize, ...keyed('upsert', ['email', 'email', 'key'], ['name', 'name']) });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('line 4: the key email="a@x" repeats line 2');
    expect(await people()).toEqual([]);
  });

  it('a key matching several records, and an empty key cell, are 400s', async () => {
    await ws.createRecords(M, 'people', [{ name: 'Twin', city: 'X' }, { name: 'Twin', city: 'Y' }]);
    const many = await csv('name,city\nTwin,Z\n', keyed('update', ['name', 'name', 'key'], ['city', 'city']));
    expect(many.status).toBe(400);
    expect(many.body.error.message).toMatch(/^line 2: the key name="Twin" matches 2 records/);
    const empty = await csv('name,city\n,Z\n', keyed('update', ['name', 'name', 'key'], ['city', 'city']));
    expect(empty.body.error.message).toContain('line 2, column 1 ("name"): the key field name is empty');
  });

  it('an update value goes through the update checks (a required field cannot be cleared)', async () => {
    await ws.createRecords(M, 'people', [{ name: 'Ann', email: 'ann@x' }]);
    const res = await csv('email,name\nann@x,\n', keyed('update', ['email', 'email', 'key'], ['name', 'name']));
    expect(res.status).toBe(400);
    expect(res.body.error.message).toContain('line 2, column 2 ("name"): field name is required and cannot be cleared');
  });
});

describe('one transaction', () => {
  it('a bad row in a later batch rolls back every batch before it, and logs no change', async () => {
    await ws.createRecords(M, 'people', [{ name: 'Keep', email: 'keep@x', age: 1 }]);
    const before = await people();
    const since = new Date().toISOString();
    const rows = Array.from({ length: 250 }, (_, i) => `p${i},p${i}@x,${i}`);
    rows[240] = 'bad,bad@x,NaN';
    const res = await csv(`name,email,age\n${rows.join('\n')}\n`, { batchSize: '10' });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toBe('line 242, column 3 ("age"): expected a number in the us format, such as 1,234.5');
    expect(await people()).toEqual(before);
    const changes = ok(await api('GET', `${recordsPath(M, 'people')}/changes?since=${since}`)).body.data;
    expect(changes).toEqual([]);
  });

  it('any batch size gives the same result, and imported records show in record changes', async () => {
    const file = `name,email,age\n${Array.from({ length: 37 }, (_, i) => `n${i},e${i}@x,${i}`).join('\n')}\n`;
    await new Promise((resolve) => setTimeout(resolve, 5)); // past the deletes of beforeEach
    const since = new Date().toISOString();
    const res = await csv(file, { batchSize: '4' });
    expect(res.body).toEqual({ data: { rowsImported: 37, rowsUpdated: 0, rowsSkipped: 0 } });
    const created = await values();
    const ids = (await people()).map((r) => r.id);
    const changes = ok(await api('GET', `${recordsPath(M, 'people')}/changes?since=${since}&limit=100`)).body.data;
    expect(changes.map((c: any) => [c.id, c.changeType])).toEqual(ids.map((id) => [id, 'create']));

    await ws.deleteRecords(M, 'people', ids);
    await csv(file, { batchSize: '10000' });
    expect(await values()).toEqual(created);

    await new Promise((resolve) => setTimeout(resolve, 5));
    const beforeUpdate = new Date().toISOString();
    const upd = await csv('email,age\ne3@x,300\n', { importMode: 'update', mappings: mappings(['email', 'email', 'key'], ['age', 'age']) });
    expect(upd.body.data.rowsUpdated).toBe(1);
    const e3 = (await people()).find((r) => r.values.email === 'e3@x')!;
    const after = ok(await api('GET', `${recordsPath(M, 'people')}/changes?since=${beforeUpdate}`)).body.data;
    expect(after.map((c: any) => [c.id, c.changeType])).toEqual([[e3.id, 'update']]);
  });
});
