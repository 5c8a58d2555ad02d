import type { FastifyInstance } from 'fastify';
import { endpoints } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { defineRoute } from '../http/define-route.ts';
import { tableView } from '../schema-views.ts';
import { createTable, deleteTable, updateTable } from '../store/schema-store.ts';

export function registerTableRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  defineRoute(app, ctx, endpoints.listTables, ({ params }) => {
    const mod = ctx.schema.requireModule(params.moduleName);
    return { data: ctx.schema.tablesOf(mod.key).map((t) => tableView(ctx, t)) };
  });

  defineRoute(app, ctx, endpoints.createTable, ({ params, body }) => ({
    data: tableView(ctx, createTable(ctx, params.moduleName, body)),
  }));

  defineRoute(app, ctx, endpoints.getTable, ({ params }) => ({
    data: tableView(ctx, ctx.schema.requireTable(params.moduleName, params.tableName)),
  }));

  defineRoute(app, ctx, endpoints.updateTable, ({ params, body, apiKey }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    return { data: tableView(ctx, updateTable(ctx, table, body, apiKey)) };
  });

  defineRoute(app, ctx, endpoints.deleteTable, ({ params }) => ({
    data: deleteTable(ctx, ctx.schema.requireTable(params.moduleName, params.tableName)),
  }));
}
