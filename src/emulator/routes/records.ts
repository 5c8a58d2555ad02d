import type { FastifyInstance } from 'fastify';
import { endpoints } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { defineRoute } from '../http/define-route.ts';
import { listRecords } from '../store/record-list.ts';
import { createRecords, deleteRecords, updateRecords } from '../store/record-store.ts';
import { requireTableRole } from '../store/table-roles.ts';

/**
 * Records list, create, update and delete. Bodies above RECORDS_PAYLOAD_LIMIT_BYTES are refused
 * with 413 by the server's body limit before any handler runs, so nothing changes.
 */
export function registerRecordRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  defineRoute(app, ctx, endpoints.listRecords, ({ params, query, apiKey }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    requireTableRole(ctx, table, apiKey, 'read');
    return listRecords(ctx, table, ctx.schema.fieldsOf(table.key), query, apiKey);
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
