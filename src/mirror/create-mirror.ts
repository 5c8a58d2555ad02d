import type { DialectDriver } from './dialect.ts';
import type { Mirror, MirrorLogger } from './mirror.ts';
import { createContext } from './mirror-context.ts';
import { applyRows } from './operations/apply-rows.ts';
import { applySchemaPlan } from './operations/apply-schema-plan.ts';
import { getCursor, setCursor } from './operations/cursors.ts';
import { outboxSummary } from './operations/outbox-summary.ts';
import { readCatalog } from './operations/read-catalog.ts';
import { countRows, readRows, streamIds } from './operations/read-rows.ts';
import { setTableState } from './operations/table-state.ts';

/**
 * A `Mirror` over an open connection: each method is one operation of `operations/`, all sharing
 * one context (connection, dialect, logger, cached table list).
 */
export function createMirror(driver: DialectDriver, displayUrl: string, logger?: MirrorLogger): Mirror {
  const ctx = createContext(driver, logger);
  return {
    dialect: driver.dialect.name,
    displayUrl,
    preferredBatchRows: driver.preferredBatchRows,
    readCatalog: () => readCatalog(ctx),
    applySchemaPlan: (plan, options) => applySchemaPlan(ctx, plan, options),
    applyRows: (tableId, batch) => applyRows(ctx, tableId, batch),
    streamIds: (tableId, options) => streamIds(ctx, tableId, options),
    countRows: (tableId) => countRows(ctx, tableId),
    readRows: (tableId, ids) => readRows(ctx, tableId, ids),
    getCursor: (key) => getCursor(ctx, key),
    setCursor: (key, value) => setCursor(ctx, key, value),
    outboxSummary: () => outboxSummary(ctx),
    setTableState: (tableId, patch) => setTableState(ctx, tableId, patch),
    async close() {
      if (ctx.closed) return;
      ctx.closed = true;
      await driver.close();
    },
  };
}
