import type { FastifyInstance } from 'fastify';
import { endpoints } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { defineRoute } from '../http/define-route.ts';
import { JsonSpool } from '../http/json-spool.ts';
import { listRecords, type RecordPage } from '../store/record-list.ts';
import { createRecords, deleteRecords, updateRecords } from '../store/record-store.ts';
import { requireTableRole } from '../store/table-roles.ts';

/**
 * A records page as JSON, in pieces: the text `JSON.stringify(page)` would give, without ever being
 * one string (a page of 100 records of 6 MB each is longer than a string may be).
 */
function* pageJson(page: RecordPage): Generator<string> {
  yield '{"data":[';
  let first = true;
  for (const record of page.records()) {
    yield `${first ? '' : ','}{"id":${JSON.stringify(record.id)},"values":{`;
    first = false;
    let firstValue = true;
    for (const name of Object.keys(record.values)) {
      yield `${firstValue ? '' : ','}${JSON.stringify(name)}:${JSON.stringify(record.values[name] ?? null)}`;
      firstValue = false;
    }
    yield '}}';
  }
  yield `],"page_info":${JSON.stringify(page.page_info)}}`;
}

/**
 * Records list, create, update and delete. Bodies above RECORDS_PAYLOAD_LIMIT_BYTES are refused
 * with 413 by the server's body limit before any handler runs, so nothing changes.
 */
export function registerRecordRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  defineRoute(app, ctx, endpoints.listRecords, ({ params, query, apiKey, reply }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    requireTableRole(ctx, table, apiKey, 'read');
    const page = listRecords(ctx, table, ctx.schema.fieldsOf(table.key), query, apiKey);
    const spool = new JsonSpool();
    try {
      for (const piece of pageJson(page)) spool.write(piece);
    } catch (error) {
      spool.discard();
      throw error;
    }
    return spool.send(reply);
  });

  defineRoute(app, ctx, endpoints.createRecords, ({ params, body, apiKey }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    requireTableRole(ctx, table, apiKey, 'create');
    const ids = createRecords(ctx, table, ctx.schema.fieldsOf(table.key), body.records, 'body.records', apiKey);
    return { data: { ids: ids.map(String) } };
  });

  defineRoute(app, ctx, endpoints.updateRecords, ({ params, body, apiKey }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    requireTableRole(ctx, table, apiKey, 'write');
    const ids = updateRecords(ctx, table, ctx.schema.fieldsOf(table.key), body.records, 'body.records', apiKey);
    return { data: { updatedIds: ids.map(String) } };
  });

  defineRoute(app, ctx, endpoints.deleteRecords, ({ params, body, apiKey }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    requireTableRole(ctx, table, apiKey, 'delete');
    const ids = deleteRecords(ctx, table, body.records);
    return { data: { deletedIds: ids.map(String) } };
  });
}
