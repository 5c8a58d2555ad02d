/**
 * What the demo prints once the mirror is current: the tables, a query to try, and with
 * `--keep-running` the commands that change a record in each direction. Plain text for a person.
 */
import { realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative } from 'node:path';
import { tableLabel } from '../../mirror/catalog.ts';
import type { Catalog, Mirror } from '../../mirror/index.ts';
import { textTable } from '../text-table.ts';
import { DEMO_SCHEDULE } from './demo-settings.ts';

const SQL_WORDS = new Set(
  ('abort action add after all alter and as asc between by case check collate column commit constraint create cross current default ' +
    'delete desc distinct drop else end escape except exists filter for foreign from full glob group having if in index inner insert ' +
    'intersect into is isnull join key left like limit match natural not notnull null of offset on or order outer over primary ' +
    'references regexp right rollback row rows select set table then to transaction union unique update using values view when ' +
    'where window with').split(' '),
);

/** True for a name that needs no quoting in SQL nor inside a double-quoted shell word. */
function plainName(name: string): boolean {
  return /^[a-z_][a-z0-9_]*$/.test(name) && !SQL_WORDS.has(name);
}

/** A word for a POSIX shell, quoted only when it has to be. */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** Double-quoted for a POSIX shell, so the SQL inside keeps its single-quoted literals readable. */
export function shellDoubleQuoted(text: string): string {
  return `"${text.replace(/["$`\\]/g, '\\$&')}"`;
}

export interface ExampleQuery {
  sql: string;
  /** The table it reads, for the curl example. */
  tableId: string;
  module: string;
  table: string;
  sqlTable: string;
  /** A field the examples may set to a number, if there is one, and its SQL column. */
  numberField: string | undefined;
  numberColumn: string | undefined;
  /** A text field, if there is one (the demo's own records get a name in it). */
  textField: string | undefined;
}

/**
 * A query over the first table with rows and a choice column: a few columns, with the choice's
 * option ids joined to `_wsmirror_choice_options` for their labels (what the readable view shows).
 */
export function exampleQuery(catalog: Catalog, rows: ReadonlyMap<string, number>): ExampleQuery | undefined {
  const tables = [...catalog.tables].sort((a, b) => (a.sqlName < b.sqlName ? -1 : 1));
  for (const t of tables) {
    if (!plainName(t.sqlName) || (rows.get(t.tableId) ?? 0) === 0) continue;
    const fields = catalog.fields.filter((f) => f.tableId === t.tableId && plainName(f.columnName)).sort((a, b) => a.position - b.position);
    const choice = fields.find((f) => f.fieldType === 'choice' && Array.isArray(f.options) && f.options.length > 0);
    if (!choice) continue;
    const text = fields.find((f) => f.fieldType === 'string');
    const number = fields.find((f) => f.fieldType === 'number' && !f.readOnly);
    const columns = [
      text ? `t.${text.columnName}` : 't.id',
      `o.label AS ${choice.columnName}`,
      ...(number ? [`t.${number.columnName}`] : []),
    ];
    const sql = `SELECT ${columns.join(', ')} FROM ${t.sqlName} t LEFT JOIN _wsmirror_choice_options o`
      + ` ON o.sql_table = '${t.sqlName}' AND o.column_name = '${choice.columnName}' AND o.option_id = t.${choice.columnName}`
      + ' ORDER BY t.id';
    return {
      sql, tableId: t.tableId, module: t.moduleName, table: t.tableName, sqlTable: t.sqlName,
      numberField: number?.fieldName, numberColumn: number?.columnName, textField: text?.fieldName,
    };
  }
  return undefined;
}

/** The file as the user would type it: relative to the working directory when inside it. */
export function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? `./${rel}` : path;
}

/**
 * How to run wsmirror again from here: `./bin/wsmirror` in a checkout (`npm start`), `wsmirror`
 * when that name on PATH is this program, else the program's path as it was invoked.
 */
export function commandName(cwd: string): string {
  const script = process.argv[1];
  if (script === undefined) return 'wsmirror';
  const shown = shownPath(script, cwd);
  if (shown !== script) return shown;
  return isOnPath('wsmirror', script) ? 'wsmirror' : script;
}

function isOnPath(name: string, script: string): boolean {
  const self = realPath(script);
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir !== '' && realPath(join(dir, name)) === self);
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

async function rowCounts(mirror: Mirror, catalog: Catalog): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const t of catalog.tables) counts.set(t.tableId, await mirror.countRows(t.tableId));
  return counts;
}

async function firstIdOf(mirror: Mirror, tableId: string): Promise<number | undefined> {
  for await (const id of mirror.streamIds(tableId, { pageSize: 1 })) return id;
  return undefined;
}

function tableLines(catalog: Catalog, rows: ReadonlyMap<string, number>): string[] {
  const tables = [...catalog.tables].sort((a, b) => (a.sqlName < b.sqlName ? -1 : 1));
  return textTable<(typeof tables)[number]>([
    { title: 'TABLE', value: tableLabel },
    { title: 'SQL TABLE', value: (t) => t.sqlName },
    { title: 'ROWS', right: true, value: (t) => String(rows.get(t.tableId) ?? 0) },
  ], tables, '  ');
}

export interface WalkthroughOptions {
  seedName: string;
  /** The mirror file as shown to the user. */
  file: string;
  /** How to run wsmirror from here. */
  self: string;
  /** With `--keep-running`: where the emulator stays up. */
  emulator: { url: string; apiKey: string; workspaceId: string } | undefined;
}

/**
 * What the demo prints once the mirror is current: plain text for a person, not for scripts.
 * Also returns the table the examples use, for the changes the demo makes itself.
 */
export async function walkthrough(mirror: Mirror, o: WalkthroughOptions): Promise<{ text: string; example: ExampleQuery | undefined }> {
  const catalog = await mirror.readCatalog();
  const rows = await rowCounts(mirror, catalog);
  const example = exampleQuery(catalog, rows);
  const out: string[] = [
    `wsmirror demo: the sample workspace "${o.seedName}", served by an embedded emulator, is mirrored into SQLite.`,
    '',
    `Mirror: ${o.file}`,
    '',
    ...tableLines(catalog, rows),
    '',
    'The _wsmirror_* tables describe the mirror (tables, fields, choice options, outbox).',
  ];
  if (example) {
    out.push(
      '',
      `Try a query (${example.module}.${example.table}, with choice option ids joined to their labels):`,
      '',
      `  sqlite3 ${shellWord(o.file)} ${shellDoubleQuoted(example.sql)}`,
    );
  }
  const env = `WSMIRROR_MIRROR_URL=${shellWord(`sqlite:${o.file}`)}`;
  out.push('', 'Check the mirror at any time:', '', `  ${env} ${shellWord(o.self)} status`);
  out.push(
    '',
    'Each table has a readable view beside it (crm__companies_v: option labels and referenced records spelled out).',
    'The data dictionary of every table, view and column (add --erd for a Mermaid diagram):',
    '',
    `  ${env} ${shellWord(o.self)} schema`,
  );
  if (o.emulator === undefined) {
    out.push('', `Run ${shellWord(o.self)} demo --keep-running to keep the emulator up and watch changes go both ways.`);
    return { text: `${out.join('\n')}\n`, example };
  }
  const { url, apiKey, workspaceId } = o.emulator;
  const records = `${url}/api/v1/workspace/${workspaceId}/modules/${example?.module ?? 'crm'}/tables/${example?.table ?? 'companies'}/records`;
  const auth = shellWord(`Authorization: Bearer ${apiKey}`);
  out.push(
    '',
    `The emulator stays up at ${url}, with the API key ${apiKey} (made for this run only).`,
    `Every ${DEMO_SCHEDULE}, wsmirror pushes local edits upstream and pulls upstream's changes; each one is printed below as it lands.`,
    '',
    'Upstream → mirror: list records, or change one through the API, then run the query again:',
    '',
    `  curl -H ${auth} ${records}`,
  );
  const firstId = example === undefined ? undefined : await firstIdOf(mirror, example.tableId);
  if (example?.numberField !== undefined && firstId !== undefined) {
    const body = JSON.stringify({ records: [{ id: firstId, [example.numberField]: 500 }] });
    out.push(`  curl -X PATCH -H ${auth} -H 'Content-Type: application/json' -d ${shellWord(body)} ${records}`);
  }
  if (example?.numberColumn !== undefined && firstId !== undefined) {
    const update = `UPDATE ${example.sqlTable} SET ${example.numberColumn} = 750 WHERE id = ${firstId}`;
    out.push(
      '',
      'Mirror → upstream: edit the mirror in SQL; the next cycle pushes the edit, then list the records upstream:',
      '',
      `  sqlite3 ${shellWord(o.file)} ${shellDoubleQuoted(update)}`,
      `  curl -H ${auth} ${records}`,
    );
  }
  out.push('', 'The demo also changes a record upstream by itself now and then, to show one arriving.', '', 'Press Ctrl-C to stop.', '');
  return { text: `${out.join('\n')}\n`, example };
}
