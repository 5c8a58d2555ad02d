import type { FastifyInstance } from 'fastify';
import { DEFAULT_PAGE_LIMIT, endpoints, formatTimestamp, parseTimestamp } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { defineRoute } from '../http/define-route.ts';
import { workspaceView } from '../schema-views.ts';

export function registerWorkspaceRoutes(app: FastifyInstance, ctx: EmulatorContext): void {
  defineRoute(app, ctx, endpoints.getWorkspace, () => ({ data: workspaceView(ctx) }));

  // One poll covers since <= changedAt <= asOf; the first page opens it, later pages echo its asOf.
  defineRoute(app, ctx, endpoints.listSchemaChanges, ({ query }) => {
    const since = parseTimestamp(query.since)!;
    const asOf = ctx.changes.pollEnd(query.asOf === undefined ? undefined : parseTimestamp(query.asOf)!);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const offset = query.offset ?? 0;
    const { rows, hasMore } = ctx.changes.schemaChanges({ since, asOf, limit, offset });
    return {
      data: rows.map((row) => {
        const [kind, action] = row.type.split(':');
        return { id: row.id, kind, action, changedAt: formatTimestamp(row.changedAt) };
      }),
      meta: { asOf: formatTimestamp(asOf) },
      page_info: { has_more: hasMore, limit, offset },
    };
  });
}
