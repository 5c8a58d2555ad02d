import type { TestMirror } from './dialects.ts';

/**
 * Reads a mirrored table back through a separate SQL connection and normalises every value, so
 * it can be compared with what upstream holds. The type table here is DESIGN §3's, written out
 * independently of the mirror's own mapping code.
 */
type Kind = 'number' | 'boolean' | 'date' | 'timestamp' | 'range' | 'json' | 'reference' | 'text';

const JSON_TYPES = new Set(['multi', 'dmulti', 'any', 'unknown', 'function', 'lambda', 'reverse', 'rowId', 'void']);

export function kindOf(type: string): Kind {
  if (type === 'number' || type === 'boolean' || type === 'date' || type === 'timestamp' || type === 'reference') return type;
  if (type === 'appointment') return 'range';
  return JSON_TYPES.has(type) ? 'json' : 'text';
}

/** The SQL type DESIGN §3 promises for a field type. */
export function expectedSqlType(dialect: 'sqlite' | 'postgres', type: string): string {
  const kind = kindOf(type);
  const pg = {
    number: 'double precision', boolean: 'boolean', date: 'date', timestamp: 'timestamp with time zone', range: 'tstzrange', json: 'jsonb', reference: 'bigint', text: 'text',
  };
  const lite = { number: 'REAL', boolean: 'INTEGER', date: 'TEXT', timestamp: 'TEXT', range: 'TEXT', json: 'TEXT', reference: 'INTEGER', text: 'TEXT' };
  return dialect === 'postgres' ? pg[kind] : lite[kind];
}

/** Normalises an upstream (API) value of a field type. */
export function canonicalApiValue(type: string, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  switch (kindOf(type)) {
    case 'timestamp':
      return new Date(value as string).toISOString();
    case 'reference':
      return Number(value);
    default:
      return value;
  }
}

function canonicalSqlValue(kind: Kind, value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'string' && (kind === 'date' || kind === 'timestamp' || kind === 'range')) value = asIsoYear(value);
  switch (kind) {
    case 'number':
      return Number(value);
    case 'boolean':
      return value === true || value === 1 || value === 't' || value === 'true';
    case 'timestamp':
      return new Date(String(value)).toISOString();
    case 'json':
      return JSON.parse(String(value));
    case 'reference':
      return Number(value);
    default:
      return value;
  }
}

export interface CatalogEntry {
  sqlName: string;
  tableId: string;
  fields: { name: string; type: string; column: string; sqlType: string }[];
}

function ph(tm: TestMirror, i: number): string {
  return tm.dialect === 'postgres' ? `$${i}` : '?';
}

export async function catalogEntry(tm: TestMirror, moduleName: string, tableName: string): Promise<CatalogEntry | undefined> {
  const [table] = await tm.sql<{ table_id: string; sql_name: string }>(
    `SELECT table_id, sql_name FROM ${tm.table('_wsmirror_tables')} WHERE module_name = ${ph(tm, 1)} AND table_name = ${ph(tm, 2)}`,
    [moduleName, tableName],
  );
  if (!table) return undefined;
  const fields = await tm.sql<{ field_name: string; field_type: string; column_name: string; sql_type: string }>(
    `SELECT field_name, field_type, column_name, sql_type FROM ${tm.table('_wsmirror_fields')} WHERE table_id = ${ph(tm, 1)} ORDER BY position`,
    [table.table_id],
  );
  return {
    sqlName: table.sql_name,
    tableId: table.table_id,
    fields: fields.map((f) => ({ name: f.field_name, type: f.field_type, column: f.column_name, sqlType: f.sql_type })),
  };
}

function q(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

// Postgres' 1 BC is ISO 8601's year 0000: marked here with '~', then turned into 0000 by asIsoYear.
const ISO_UTC = (value: string) => `to_char(${value} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || CASE WHEN ${value} < '0001-01-01 00:00Z' THEN '~' ELSE '' END`;

/** `0001-…~` (Postgres' 1 BC, marked by the select) as `0000-…`, in each bound of a range too. */
function asIsoYear(text: string): string {
  return text.replace(/0001-([^,)~]*)~/g, '0000-$1');
}

function selectExpression(tm: TestMirror, kind: Kind, column: string): string {
  const c = q(column);
  if (tm.dialect === 'sqlite') return c;
  switch (kind) {
    case 'date':
      return `to_char(${c}, 'YYYY-MM-DD') || CASE WHEN ${c} < DATE '0001-01-01' THEN '~' ELSE '' END`;
    case 'timestamp':
      return ISO_UTC(c);
    case 'range':
      // The API's [start,end) from the bounds; an empty range shows as such.
      return `CASE WHEN isempty(${c}) THEN 'empty' ELSE '[' || ${ISO_UTC(`lower(${c})`)} || ',' || ${ISO_UTC(`upper(${c})`)} || ')' END`;
    case 'json':
    case 'reference':
      return `${c}::text`;
    default:
      return c;
  }
}

/** Every row of a mirrored table: id → { field name → normalised value }. */
export async function mirrorRows(tm: TestMirror, moduleName: string, tableName: string): Promise<Map<string, Record<string, unknown>>> {
  const entry = await catalogEntry(tm, moduleName, tableName);
  if (!entry) throw new Error(`${moduleName}.${tableName} is not in the mirror's catalog`);
  const columns = entry.fields.map((f, i) => `${selectExpression(tm, kindOf(f.type), f.column)} AS c${i}`);
  const idExpr = tm.dialect === 'postgres' ? 'id::text AS id' : 'id';
  const rows = await tm.sql<Record<string, unknown>>(
    `SELECT ${[idExpr, ...columns].join(', ')} FROM ${tm.table(entry.sqlName)}`,
  );
  rows.sort((a, b) => Number(a['id']) - Number(b['id']));
  const out = new Map<string, Record<string, unknown>>();
  for (const row of rows) {
    // fromEntries defines own keys: a field may be called `__proto__`.
    out.set(String(row['id']), Object.fromEntries(entry.fields.map((f, i) => [f.name, canonicalSqlValue(kindOf(f.type), row[`c${i}`])])));
  }
  return out;
}

/** Upstream records normalised the same way: id → { field name → value }. */
export function upstreamRows(
  records: { id: string; values: Record<string, unknown> }[],
  fieldTypes: Record<string, string>,
): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const r of records) {
    const values = Object.entries(fieldTypes).map(([name, type]) => [name, canonicalApiValue(type, r.values[name])]);
    out.set(r.id, Object.fromEntries(values));
  }
  return out;
}
