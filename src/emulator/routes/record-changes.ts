import type { FastifyInstance } from 'fastify';
import { DEFAULT_PAGE_LIMIT, endpoints, formatTimestamp, parseTimestamp } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError } from '../errors.ts';
import { defineRoute } from '../http/define-route.ts';
import { requireTableRole } from '../store/table-roles.ts';

/**
 * GET .../records/changes: one entry per change event, ordered by time, within
 * `since <= changedAt <= asOf`. Without `asOf` a new poll opens at now (see ChangeLog).
 */
export function registerRecordChangeRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  defineRoute(app, ctx, endpoints.listRecordChanges, ({ params, query, apiKey }) => {
    const table = ctx.schema.requireTable(params.moduleName, params.tableName);
    requireTableRole(ctx, table, apiKey, 'read');
    if (table.props.hasHistory !== true) {
      throw new BadRequestError(
        `table ${table.moduleName}.${table.name} has no history: enable hasHistory to poll its record changes`,
      );
    }
    const since = parseTimestamp(query.since)!;
    const asOf = ctx.changes.pollEnd(query.asOf === undefined ? undefined : parseTimestamp(query.asOf)!);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const offset = query.offset ?? 0;
    const { rows, hasMore } = ctx.changes.recordChanges(table.key, { since, asOf, limit, offset });
    return {
      data: rows.map((r) => ({ id: r.id, changeType: r.type, changedAt: formatTimestamp(r.changedAt) })),
      meta: { asOf: formatTimestamp(asOf) },
      page_info: { has_more: hasMore, limit, offset },
    };
  });
}
