import type { Catalog, MirrorField, MirrorTable } from './catalog.ts';
import { fieldsOf, tableLabel } from './catalog.ts';
import { CATALOG_TABLES } from './catalog-tables.ts';
import { DIALECTS } from './dialects.ts';
import { ID_COLUMN, SYNCED_AT_COLUMN, SYSTEM_COLUMN_COMMENTS } from './naming.ts';
import type { ReadableView, ViewColumn } from './readable-view.ts';
import { describeViewColumn, readableViewOf } from './readable-view.ts';

/**
 * The data dictionary of a mirror (`wsmirror schema`): every mirrored table and its readable
 * view, each column with its SQL type, label and reference, as Markdown; or the tables and their
 * references as a Mermaid ER diagram. Made from the catalog alone. Pure.
 */

interface Column {
  name: string;
  type: string;
  field: string;
  label: string;
  references: string;
}

export function dataDictionaryMarkdown(catalog: Catalog): string {
  const dialect = DIALECTS[catalog.dialect];
  const tables = sortedTables(catalog);
  const byId = new Map(catalog.tables.map((t) => [t.tableId, t]));
  const out: string[] = ['# Data dictionary', ''];
  if (tables.length === 0) {
    out.push('No tables are mirrored yet (run `wsmirror sync`).', '');
  } else {
    out.push('| table | upstream | label | readable view | mode |', '|---|---|---|---|---|');
    for (const t of tables) {
      out.push(row([code(t.sqlName), text(tableLabel(t)), text(t.label ?? ''), t.viewName === null ? '' : code(t.viewName), t.mode]));
    }
    out.push('');
  }
  for (const t of tables) {
    const fields = fieldsOf(catalog, t.tableId);
    out.push(`## ${t.sqlName}`, '');
    out.push(`Upstream table ${code(`${t.moduleName}.${t.tableName}`)}${t.label === null ? '' : ` (${text(t.label)})`}, id ${code(t.tableId)}.`, '');
    out.push(...columnTable(tableColumns(catalog, t, fields, byId)));
    if (t.viewName !== null) {
      const view = readableViewOf(t, catalog.fields, byId, dialect);
      out.push(`### ${view.viewName}`, '', `Readable view of \`${t.sqlName}\`: its columns, and readable ones beside them.`, '');
      out.push(...columnTable(viewColumns(catalog, view)));
    }
  }
  out.push('## Catalog tables', '');
  out.push('| table | holds |', '|---|---|');
  for (const def of [...CATALOG_TABLES, ...dialect.extraCatalogTables]) out.push(row([code(def.name), def.comment.replace(/^wsmirror: /, '')]));
  out.push('');
  return `${out.join('\n')}\n`;
}

/** The mirrored tables and their references as a Mermaid `erDiagram`. */
export function entityRelationshipDiagram(catalog: Catalog): string {
  const tables = sortedTables(catalog);
  const byId = new Map(catalog.tables.map((t) => [t.tableId, t]));
  const out = ['erDiagram'];
  const links: string[] = [];
  for (const t of tables) {
    out.push(`  ${entity(t.sqlName)} {`);
    out.push(`    ${word(DIALECTS[catalog.dialect].systemColumnTypes.id)} ${attribute(ID_COLUMN)} PK "record id"`);
    for (const f of fieldsOf(catalog, t.tableId)) {
      const target = f.fieldType === 'reference' && f.refTableId !== null ? byId.get(f.refTableId) : undefined;
      const label = f.label === null ? '' : ` "${f.label.replace(/["\\\n\r]/g, ' ')}"`;
      out.push(`    ${word(f.sqlType)} ${attribute(f.columnName)}${target ? ' FK' : ''}${label}`);
      if (target) links.push(`  ${entity(target.sqlName)} |o--o{ ${entity(t.sqlName)} : "${f.columnName}"`);
    }
    out.push('  }');
  }
  return `${[...out, ...links].join('\n')}\n`;
}

function sortedTables(catalog: Catalog): MirrorTable[] {
  return [...catalog.tables].sort((a, b) => (a.sqlName < b.sqlName ? -1 : a.sqlName > b.sqlName ? 1 : 0));
}

function tableColumns(catalog: Catalog, t: MirrorTable, fields: MirrorField[], byId: ReadonlyMap<string, MirrorTable>): Column[] {
  const types = DIALECTS[catalog.dialect].systemColumnTypes;
  return [
    { name: ID_COLUMN, type: types.id, field: '', label: `${SYSTEM_COLUMN_COMMENTS[ID_COLUMN]} (primary key)`, references: '' },
    { name: SYNCED_AT_COLUMN, type: types.syncedAt, field: '', label: SYSTEM_COLUMN_COMMENTS[SYNCED_AT_COLUMN]!, references: '' },
    ...fields.map((f) => ({
      name: f.columnName,
      type: f.sqlType,
      field: text(`${f.fieldName} (${f.fieldType}${f.readOnly ? ', read-only' : ''})`),
      label: text(f.label ?? ''),
      references: referenceOf(f, byId),
    })),
  ];
}

function referenceOf(f: MirrorField, byId: ReadonlyMap<string, MirrorTable>): string {
  if (f.fieldType === 'choice' || f.fieldType === 'multi') return 'option ids: `_wsmirror_choice_options.option_id`';
  if (f.refTableId === null) return '';
  const target = byId.get(f.refTableId);
  const where = target ? code(`${target.sqlName}.id`) : `table ${code(f.refTableId)} (not mirrored)`;
  return f.fieldType === 'reference' ? where : `ids of ${where}`;
}

function viewColumns(catalog: Catalog, view: ReadableView): Column[] {
  const dialect = DIALECTS[catalog.dialect];
  const system = dialect.systemColumnTypes;
  return view.columns.map((c: ViewColumn) => {
    if (c.kind === 'column') {
      if (c.field === null) {
        return { name: c.name, type: c.name === ID_COLUMN ? system.id : system.syncedAt, field: '', label: text(describeViewColumn(c) ?? ''), references: '' };
      }
      return { name: c.name, type: c.field.sqlType, field: text(c.field.fieldName), label: text(c.field.label ?? ''), references: '' };
    }
    const types = dialect.viewTypes;
    const type = c.kind === 'optionLabels' || c.kind === 'idList' ? types.list
      : c.kind === 'rangeStart' || c.kind === 'rangeEnd' ? types.bound
        : c.kind === 'range' ? types.range ?? dialect.columnTypes.text
          : dialect.columnTypes.text;
    return {
      name: c.name,
      type,
      field: text(c.field.fieldName),
      label: text(describeViewColumn(c) ?? ''),
      references: c.kind === 'referenceLabel' && c.target !== null ? code(`${c.target.table.sqlName}.${c.target.display?.columnName ?? ID_COLUMN}`) : '',
    };
  });
}

function columnTable(columns: Column[]): string[] {
  return [
    '| column | type | field | label | references |',
    '|---|---|---|---|---|',
    ...columns.map((c) => row([code(c.name), c.type, c.field, c.label, c.references])),
    '',
  ];
}

function row(cells: string[]): string {
  return `| ${cells.map((c) => c.replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ')).join(' | ')} |`;
}

/**
 * Upstream text (a label, a name) as Markdown shows it and never reads it: on one line, with the
 * characters that start markup escaped, so a label cannot add a heading, HTML or a code span.
 */
function text(value: string): string {
  return value.replace(/[\r\n]+/g, ' ').replace(/[\\`*[\]<>&]/g, '\\$&');
}

/** A code span that holds `name` whatever backticks it has (CommonMark: a longer fence). */
function code(name: string): string {
  const oneLine = name.replace(/[\r\n]+/g, ' ');
  const longest = Math.max(0, ...(oneLine.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  const pad = oneLine.startsWith('`') || oneLine.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${oneLine}${pad}${fence}`;
}

/** Mermaid names: letters, digits, `_` and `-`, not starting with a digit. */
function attribute(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_-]/g, '_');
  return /^[A-Za-z_]/.test(safe) ? safe : `_${safe}`;
}

const entity = attribute;

/** A type as one Mermaid word: `double precision` → `double_precision`. */
function word(type: string): string {
  return type.replace(/\s+/g, '_');
}
