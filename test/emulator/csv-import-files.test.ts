import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { postCsv } from '../helpers/csv-upload.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { field } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * Awkward CSV files as people export them from spreadsheets and other systems: each case is a
 * file (bytes) with the form parts it is sent with and the records it must give, read back
 * through the records list.
 */

let emu: RunningEmulator;
let ws: UpstreamWorkspace;

beforeAll(async () => {
  emu = await startEmulator();
  ws = new UpstreamWorkspace(emu);
  await ws.createModule('files');
  await ws.createTable('files', 'rows', {}, [
    field('name', 'string'),
    field('note', 'string'),
    field('qty', 'number'),
  ]);
});
afterAll(() => emu.close());

beforeEach(async () => {
  const ids = (await ws.allRecords('files', 'rows')).map((r) => r.id);
  if (ids.length > 0) await ws.deleteRecords('files', 'rows', ids);
});

type Row = { name?: string | null; note?: string | null; qty?: number | null };

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const UTF16_BOM = Buffer.from([0xff, 0xfe]);
// A multi-byte character straddles the 64 KiB chunks the file is read in.
const LONG = 'é'.repeat(40_000);

const cases: { name: string; file: Buffer; parts?: Record<string, string>; rows: Row[]; skipped?: number }[] = [
  {
    name: 'quoted delimiters',
    file: utf8('name,note,qty\n"Smith, Ann","a, b, c",1\n'),
    rows: [{ name: 'Smith, Ann', note: 'a, b, c', qty: 1 }],
  },
  {
    name: 'escaped (doubled) quotes',
    file: utf8('name,note,qty\n"The ""Best"" Co","say ""hi""",2\n'),
    rows: [{ name: 'The "Best" Co', note: 'say "hi"', qty: 2 }],
  },
  {
    name: 'line breaks inside quotes, LF and CRLF',
    file: utf8('name,note,qty\r\n"two\nlines","three\r\nline\r\nnote",3\r\nnext,x,4\r\n'),
    rows: [{ name: 'two\nlines', note: 'three\r\nline\r\nnote', qty: 3 }, { name: 'next', note: 'x', qty: 4 }],
  },
  {
    name: 'CRLF line endings',
    file: utf8('name,note,qty\r\na,b,1\r\nc,d,2\r\n'),
    rows: [{ name: 'a', note: 'b', qty: 1 }, { name: 'c', note: 'd', qty: 2 }],
  },
  {
    name: 'LF line endings and no final line break',
    file: utf8('name,note,qty\na,b,1\nc,d,2'),
    rows: [{ name: 'a', note: 'b', qty: 1 }, { name: 'c', note: 'd', qty: 2 }],
  },
  {
    name: 'mixed line endings',
    file: utf8('name,note,qty\r\na,b,1\nc,d,2\r\ne,f,3'),
    rows: [{ name: 'a', note: 'b', qty: 1 }, { name: 'c', note: 'd', qty: 2 }, { name: 'e', note: 'f', qty: 3 }],
  },
  {
    name: 'empty fields, quoted and not',
    file: utf8('name,note,qty\na,,\n"",b,""\n,,7\n'),
    rows: [{ name: 'a', note: null, qty: null }, { name: null, note: 'b', qty: null }, { name: null, note: null, qty: 7 }],
  },
  {
    name: 'blank and empty rows are skipped',
    file: utf8('name,note,qty\na,b,1\n\n,,\n  , ,\nc,d,2\n'),
    rows: [{ name: 'a', note: 'b', qty: 1 }, { name: 'c', note: 'd', qty: 2 }],
    skipped: 3,
  },
  {
    name: 'a UTF-8 byte-order mark before the header',
    file: Buffer.concat([BOM, utf8('name,note,qty\nBOM,ok,1\n')]),
    rows: [{ name: 'BOM', note: 'ok', qty: 1 }],
  },
  {
    name: 'multi-byte characters, one split across read chunks',
    file: utf8(`name,note,qty\nZoë 🚀 東京,"Ærø, ﬁ",1\n${LONG},x,2\n`),
    rows: [{ name: 'Zoë 🚀 東京', note: 'Ærø, ﬁ', qty: 1 }, { name: LONG, note: 'x', qty: 2 }],
  },
  {
    name: 'header names in another case, with spaces around',
    file: utf8('NAME , Note,QTY\na,b,1\n'),
    rows: [{ name: 'a', note: 'b', qty: 1 }],
  },
  {
    name: 'columns in another order than the fields',
    file: utf8('qty,note,name\n1,b,a\n'),
    rows: [{ name: 'a', note: 'b', qty: 1 }],
  },
  {
    name: 'semicolons, detected (European spreadsheet export)',
    file: utf8('name;note;qty\n"a;b";c,d;1,5\n'),
    parts: { numberFormat: 'eu' },
    rows: [{ name: 'a;b', note: 'c,d', qty: 1.5 }],
  },
  {
    name: 'tabs, detected',
    file: utf8('name\tnote\tqty\na, b\tc; d\t1\n'),
    rows: [{ name: 'a, b', note: 'c; d', qty: 1 }],
  },
  {
    name: 'pipes, detected',
    file: utf8('name|note|qty\na,b|c;d|1\n'),
    rows: [{ name: 'a,b', note: 'c;d', qty: 1 }],
  },
  {
    name: 'UTF-16LE with its byte-order mark, tabs (Excel "Unicode text")',
    file: Buffer.concat([UTF16_BOM, Buffer.from('name\tnote\tqty\r\nÜber\t€ 5\t2\r\n', 'utf16le')]),
    rows: [{ name: 'Über', note: '€ 5', qty: 2 }],
  },
  {
    name: 'UTF-16LE named by the encoding part, no byte-order mark',
    file: Buffer.from('name,note,qty\n日本,x,1\n', 'utf16le'),
    parts: { encoding: 'utf16le' },
    rows: [{ name: '日本', note: 'x', qty: 1 }],
  },
  {
    name: 'Latin-1 (Windows-1252)',
    file: Buffer.from([...Buffer.from('name;note;qty\n'), 0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72, 0x3b, 0x80, 0x3b, 0x31, 0x0a]),
    parts: { encoding: 'latin1' },
    rows: [{ name: 'Müller', note: '€', qty: 1 }],
  },
  {
    name: 'trailing delimiters after the last column (empty extra cells)',
    file: utf8('name,note,qty,,\na,b,1,,\n'),
    parts: { mappings: JSON.stringify([{ csvColumnName: 'name', fieldName: 'name' }, { csvColumnName: 'note', fieldName: 'note' }, { csvColumnName: 'qty', fieldName: 'qty' }]) },
    rows: [{ name: 'a', note: 'b', qty: 1 }],
  },
  {
    name: 'trailing delimiters after the header and the rows, without mappings',
    file: utf8('name,note,qty,\r\na,b,1,\r\nc,,,\r\n'),
    rows: [{ name: 'a', note: 'b', qty: 1 }, { name: 'c' }],
  },
  {
    name: 'rows with fewer cells than the header',
    file: utf8('name,note,qty\na\nb,c\n'),
    rows: [{ name: 'a', note: null, qty: null }, { name: 'b', note: 'c', qty: null }],
  },
  {
    name: 'another quote character',
    file: utf8("name,note,qty\n'a, b','it''s',1\n"),
    parts: { quoteChar: "'" },
    rows: [{ name: 'a, b', note: "it's", qty: 1 }],
  },
  {
    name: 'a quote character that detection also looks for, in a file with another delimiter',
    file: utf8('name;note;qty\n|a; b|;|it||s|;1\n'),
    parts: { quoteChar: '|' },
    rows: [{ name: 'a; b', note: 'it|s', qty: 1 }],
  },
  {
    name: 'a quote inside an unquoted cell is kept',
    file: utf8('name,note,qty\n15" screen,5\'11",1\n'),
    rows: [{ name: '15" screen', note: '5\'11"', qty: 1 }],
  },
  {
    name: 'spaces around numbers, kept around text',
    file: utf8('name,note,qty\n  a  , b , 1.5 \n'),
    rows: [{ name: '  a  ', note: ' b ', qty: 1.5 }],
  },
];

it.each(cases)('$name', async ({ file, parts, rows, skipped }) => {
  const res = await postCsv(emu, 'files', 'rows', file, parts);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body).toEqual({ data: { rowsImported: rows.length, rowsUpdated: 0, rowsSkipped: skipped ?? 0 } });
  const stored = (await ws.allRecords('files', 'rows')).map((r) => r.values);
  expect(stored).toEqual(rows.map((r) => ({ name: null, note: null, qty: null, ...r })));
});

it.each([
  ['a quote left open', 'name,note,qty\na,"open,1\nb,c,2\n', /invalid CSV: the record starting on line 2: Quote Not Closed/],
  ['bytes that are not UTF-8', Buffer.from([...Buffer.from('name,note,qty\n'), 0xe9, 0x2c, 0x78, 0x2c, 0x31, 0x0a]), /not valid UTF-8 text.*encoding/],
  ['more cells than the header', 'name,note,qty\na,b,1,extra\n', /^line 2: 4 cells where the header has 3$/],
  ['a value under a trailing empty header cell', 'name,note,qty, \na,b,1,extra\n', /^line 2: 4 cells where the header has 3$/],
  ['an empty file', '', /the file is empty/],
])('refuses %s with 400 and changes nothing', async (_name, file, message) => {
  const res = await postCsv(emu, 'files', 'rows', file);
  expect(res.status).toBe(400);
  expect(res.body.error.message).toMatch(message);
  expect(await ws.allRecords('files', 'rows')).toEqual([]);
});
