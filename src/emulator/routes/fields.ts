import type { FastifyInstance } from 'fastify';
import { DEFAULT_PAGE_LIMIT, endpoints } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { defineRoute } from '../http/define-route.ts';
import { fieldView } from '../schema-views.ts';
import { createFields, deleteFields, updateFields } from '../store/field-store.ts';

const single = () => 'body';
const item = (i: number) => `body[${i}]`;

export function registerFieldRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  // The spec sets no maximum for `limit` here: any limit of 1 or more is honoured.
  defineRoute(app, ctx, endpoints.listFields, ({ params, query }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const offset = query.offset ?? 0;
    const fields = ctx.schema.fieldsOf(table.key);
    return {
      data: fields.slice(offset, offset + limit).map(fieldView),
      page_info: { has_more: offset + limit < fields.length, limit, offset },
    };
  });

  defineRoute(app, ctx, endpoints.createField, ({ params, body, apiKey }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    const [field] = createFields(ctx, table, [body], { actor: apiKey, at: single });
    return { data: fieldView(field!) };
  });

  defineRoute(app, ctx, endpoints.createFields, ({ params, body, apiKey }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    return { data: createFields(ctx, table, body, { actor: apiKey, at: item }).map(fieldView) };
  });

  defineRoute(app, ctx, endpoints.updateFields, ({ params, body, apiKey }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    return { data: updateFields(ctx, table, body, { actor: apiKey, at: item }).map(fieldView) };
  });

  defineRoute(app, ctx, endpoints.deleteFields, ({ params, body }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    return { data: deleteFields(ctx, table, body.fieldNames, (i) => `body.fieldNames[${i}]`).map(fieldView) };
  });

  defineRoute(app, ctx, endpoints.getField, ({ params }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    return { data: fieldView(ctx.schema.requireField(table, params.fieldName)) };
  });

  defineRoute(app, ctx, endpoints.updateField, ({ params, body, apiKey }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    const field = ctx.schema.requireField(table, params.fieldName);
    const [updated] = updateFields(ctx, table, [{ fieldName: field.name, ...body }], { actor: apiKey, at: single });
    return { data: fieldView(updated!) };
  });

  defineRoute(app, ctx, endpoints.deleteField, ({ params }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    const field = ctx.schema.requireField(table, params.fieldName);
    const [deleted] = deleteFields(ctx, table, [field.name], single);
    return { data: fieldView(deleted!) };
  });
}
