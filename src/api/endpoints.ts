import * as z from 'zod';
import { dataOf } from './common.ts';
import { schemaChangesPageSchema, recordChangesPageSchema } from './changes.ts';
import {
  fieldBatchCreateSchema, fieldBatchDeleteSchema, fieldBatchUpdateSchema, fieldCreateSchema, fieldSchema,
  fieldUpdateSchema,
} from './field.ts';
import { fieldNameSchema, moduleNameSchema, tableNameSchema, workspaceIdSchema } from './identifiers.ts';
import { changesQuerySchema, fieldsListQuerySchema } from './paging.ts';
import { pageInfoSchema } from './common.ts';
import { recordListResponseCheck, type ResponseCheck } from './record-page-check.ts';
import {
  csvImportResponseSchema, recordCreateBodySchema, recordCreateResponseSchema, recordDeleteBodySchema,
  recordDeleteResponseSchema, recordListQuerySchema, recordListResponseSchema, recordUpdateBodySchema,
  recordUpdateResponseSchema,
} from './records.ts';
import { tableCreateSchema, tablePatchSchema, tableSchema } from './table.ts';
import { workspaceSchema } from './workspace.ts';

/**
 * Every endpoint of the API, described once. The emulator registers its routes from this table,
 * the client builds its paths from it, and the OpenAPI document is generated from it.
 */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface Endpoint {
  method: HttpMethod;
  /** Path with `{param}` placeholders, relative to the base URL. */
  path: string;
  summary: string;
  params: z.ZodObject;
  query?: z.ZodType;
  body?: z.ZodType;
  /** Set for multipart endpoints: the body is multipart/form-data, not JSON. */
  multipart?: true;
  status: number;
  response: z.ZodType;
  /**
   * A faster check that accepts exactly what `response` accepts, for responses that carry many
   * records; clients use it in place of `response` (which the OpenAPI document and the emulator
   * keep using).
   */
  check?: ResponseCheck;
  errors: readonly number[];
}

const ws = { workspaceId: workspaceIdSchema };
const mod = { ...ws, moduleName: moduleNameSchema };
const tbl = { ...mod, tableName: tableNameSchema };
const fld = { ...tbl, fieldName: fieldNameSchema };

const WS = '/api/v1/workspace/{workspaceId}';
const TABLES = `${WS}/modules/{moduleName}/tables`;
const TABLE = `${TABLES}/{tableName}`;
const FIELDS = `${TABLE}/fields`;
const RECORDS = `${TABLE}/records`;

export const endpoints = {
  getWorkspace: {
    method: 'GET', path: WS, summary: 'Workspace with all modules, tables and fields',
    params: z.object(ws), status: 200, response: dataOf(workspaceSchema), errors: [401, 404],
  },
  listSchemaChanges: {
    method: 'GET', path: `${WS}/schema/changes`, summary: 'Schema objects changed at or after `since`',
    params: z.object(ws), query: changesQuerySchema, status: 200, response: schemaChangesPageSchema,
    errors: [400, 401, 404],
  },
  listTables: {
    method: 'GET', path: TABLES, summary: 'Tables of a module',
    params: z.object(mod), status: 200, response: dataOf(z.array(tableSchema)), errors: [401, 404],
  },
  createTable: {
    method: 'POST', path: TABLES, summary: 'Create a table',
    params: z.object(mod), body: tableCreateSchema, status: 201, response: dataOf(tableSchema), errors: [400, 401, 404],
  },
  getTable: {
    method: 'GET', path: TABLE, summary: 'A table with its fields',
    params: z.object(tbl), status: 200, response: dataOf(tableSchema), errors: [401, 404],
  },
  updateTable: {
    method: 'PATCH', path: TABLE, summary: 'Update or rename a table',
    params: z.object(tbl), body: tablePatchSchema, status: 200, response: dataOf(tableSchema), errors: [400, 401, 404],
  },
  deleteTable: {
    method: 'DELETE', path: TABLE, summary: 'Delete a table with its fields and records',
    params: z.object(tbl), status: 200, response: dataOf(z.object({ id: z.string() })), errors: [401, 404],
  },
  listFields: {
    method: 'GET', path: FIELDS, summary: 'Fields of a table, paged',
    params: z.object(tbl), query: fieldsListQuerySchema, status: 200,
    response: z.object({ data: z.array(fieldSchema), page_info: pageInfoSchema }), errors: [400, 401, 404],
  },
  createField: {
    method: 'POST', path: FIELDS, summary: 'Create a field',
    params: z.object(tbl), body: fieldCreateSchema, status: 201, response: dataOf(fieldSchema), errors: [400, 401, 404],
  },
  createFields: {
    method: 'POST', path: `${FIELDS}/batch`, summary: 'Create fields in one transaction',
    params: z.object(tbl), body: fieldBatchCreateSchema, status: 201, response: dataOf(z.array(fieldSchema)),
    errors: [400, 401, 404],
  },
  updateFields: {
    method: 'PATCH', path: `${FIELDS}/batch`, summary: 'Update fields in one transaction',
    params: z.object(tbl), body: fieldBatchUpdateSchema, status: 200, response: dataOf(z.array(fieldSchema)),
    errors: [400, 401, 404],
  },
  deleteFields: {
    method: 'DELETE', path: `${FIELDS}/batch`, summary: 'Delete fields in one transaction',
    params: z.object(tbl), body: fieldBatchDeleteSchema, status: 200, response: dataOf(z.array(fieldSchema)),
    errors: [400, 401, 404],
  },
  getField: {
    method: 'GET', path: `${FIELDS}/{fieldName}`, summary: 'A field with its full configuration',
    params: z.object(fld), status: 200, response: dataOf(fieldSchema), errors: [401, 404],
  },
  updateField: {
    method: 'PATCH', path: `${FIELDS}/{fieldName}`, summary: 'Update or rename a field',
    params: z.object(fld), body: fieldUpdateSchema, status: 200, response: dataOf(fieldSchema), errors: [400, 401, 404],
  },
  deleteField: {
    method: 'DELETE', path: `${FIELDS}/{fieldName}`, summary: 'Delete a field',
    params: z.object(fld), status: 200, response: dataOf(fieldSchema), errors: [401, 404],
  },
  listRecords: {
    method: 'GET', path: RECORDS, summary: 'Records of a table, paged, filtered and sorted',
    params: z.object(tbl), query: recordListQuerySchema, status: 200, response: recordListResponseSchema,
    check: recordListResponseCheck, errors: [400, 401, 404],
  },
  createRecords: {
    method: 'POST', path: RECORDS, summary: 'Create records in one transaction',
    params: z.object(tbl), body: recordCreateBodySchema, status: 201, response: recordCreateResponseSchema,
    errors: [400, 401, 404, 413],
  },
  updateRecords: {
    method: 'PATCH', path: RECORDS, summary: 'Update records in one transaction',
    params: z.object(tbl), body: recordUpdateBodySchema, status: 200, response: recordUpdateResponseSchema,
    errors: [400, 401, 404, 413],
  },
  deleteRecords: {
    method: 'DELETE', path: RECORDS, summary: 'Delete records in one transaction',
    params: z.object(tbl), body: recordDeleteBodySchema, status: 200, response: recordDeleteResponseSchema,
    errors: [400, 401, 404],
  },
  listRecordChanges: {
    method: 'GET', path: `${RECORDS}/changes`, summary: 'Records created, updated or deleted at or after `since`',
    params: z.object(tbl), query: changesQuerySchema, status: 200, response: recordChangesPageSchema,
    errors: [400, 401, 404],
  },
  importCsv: {
    method: 'POST', path: `${RECORDS}/import/csv`, summary: 'Import records from a CSV file in one transaction',
    params: z.object(tbl), multipart: true, status: 200, response: csvImportResponseSchema,
    errors: [400, 401, 404, 413],
  },
} as const satisfies Record<string, Endpoint>;

export type EndpointName = keyof typeof endpoints;

/** Fills `{param}` placeholders, encoding each value. */
export function buildPath(template: string, params: Record<string, string>): string {
  return template.replace(/\{(\w+)\}/g, (_m, key: string) => {
    const value = params[key];
    if (value === undefined) throw new Error(`missing path parameter ${key}`);
    return encodeURIComponent(value);
  });
}
