import { MirrorFileGoneError, SyncLockLostError } from '../errors.ts';
import type { SyncLock } from './dialect.ts';
import type { Mirror } from './mirror.ts';
import { assertOpen } from './mirror-context.ts';
import type { MirrorContext } from './mirror-context.ts';
import { applyRows } from './operations/apply-rows.ts';
import { applySchemaPlan } from './operations/apply-schema-plan.ts';
import { encodeRows } from './operations/encode-rows.ts';
import { getCursor, readCursors, setCursor } from './operations/cursors.ts';
import { discardOutbox } from './operations/discard-outbox.ts';
import { listOutbox, oldestPendingAt } from './operations/list-outbox.ts';
import { markSending } from './operations/mark-sending.ts';
import { outboxSummary } from './operations/outbox-summary.ts';
import { readBaseValues } from './operations/read-base-values.ts';
import { readPendingEdits } from './operations/read-pending-edits.ts';
import { retryOutbox } from './operations/retry-outbox.ts';
import { holdRecordEdits } from './operations/hold-record-edits.ts';
import { settleEdits } from './operations/settle-edits.ts';
import { boundCreatedIds, followCreatedRows } from './operations/created-rows.ts';
import { waitingEdits } from './operations/waiting-edits.ts';
import { readCatalog } from './operations/read-catalog.ts';
import { migrateCatalog, pendingUpgrades } from './operations/migrate-catalog.ts';
import { countRows, readRows, streamIds } from './operations/read-rows.ts';
import { accessProblems } from './operations/access-problems.ts';
import { resetTables } from './operations/reset-tables.ts';
import { readSyncState, recordCycle } from './operations/sync-status.ts';
import { setTableState } from './operations/table-state.ts';

/**
 * A `Mirror` over an open connection: each method is one operation of `operations/`, all sharing
 * one context (connection, dialect, logger, cached table list). A sync lock given is confirmed
 * by `confirmSyncing` and released when it closes. `where` names the mirror in messages (the URL,
 * and the schema on Postgres).
 */
export function createMirror(ctx: MirrorContext, displayUrl: string, syncLock?: SyncLock, where: string = displayUrl): Mirror {
  const driver = ctx.driver;
  let goneReported = false;
  return {
    dialect: ctx.dialect.name,
    displayUrl,
    preferredBatchRows: driver.preferredBatchRows,
    preferredPushRoundRecords: driver.preferredPushRoundRecords,
    readCatalog: () => readCatalog(ctx),
    finishMigration: () => migrateCatalog(ctx),
    revokeExtraGrants: () => driver.revokeExtraGrants(),
    applySchemaPlan: (plan, options) => applySchemaPlan(ctx, plan, options),
    applyRows: (tableId, batch) => applyRows(ctx, tableId, batch),
    encodeRows: (tableId, records, into) => encodeRows(ctx, tableId, records, into),
    streamIds: (tableId, options) => streamIds(ctx, tableId, options),
    countRows: (tableId) => countRows(ctx, tableId),
    readRows: (tableId, ids) => readRows(ctx, tableId, ids),
    getCursor: (key) => getCursor(ctx, key),
    readCursors: () => readCursors(ctx),
    setCursor: (key, value) => setCursor(ctx, key, value),
    outboxSummary: () => outboxSummary(ctx),
    oldestPendingAt: () => oldestPendingAt(ctx),
    waitingEdits: () => waitingEdits(ctx),
    readPendingEdits: (options) => readPendingEdits(ctx, options),
    markSending: (creates, at) => markSending(ctx, creates, at),
    settleEdits: (outcomes) => settleEdits(ctx, outcomes),
    followCreatedRows: (rows) => followCreatedRows(ctx, rows),
    boundCreatedIds: (tableId, createdIds) => boundCreatedIds(ctx, tableId, createdIds),
    readBaseValues: (tableId, recordIds) => readBaseValues(ctx, tableId, recordIds),
    listOutbox: (filter) => listOutbox(ctx, filter),
    retryOutbox: (filter) => retryOutbox(ctx, filter),
    holdRecordEdits: (message) => holdRecordEdits(ctx, message),
    discardOutbox: (filter) => discardOutbox(ctx, filter),
    setTableState: (tableId, patch) => setTableState(ctx, tableId, patch),
    resetTables: (tableIds) => resetTables(ctx, tableIds),
    accessProblems: () => accessProblems(ctx),
    filesystemRoom: () => driver.filesystemRoom(),
    outboxUnreadable: () => driver.outboxUnreadable(),
    syncLockHolder: () => driver.syncLockHolder(),
    sharedWriteAccess: () => driver.sharedWriteAccess(),
    pendingUpgrades: () => pendingUpgrades(ctx),
    readSyncState: () => readSyncState(ctx),
    recordCycle: (cycle) => recordCycle(ctx, cycle),
    async confirmSyncing() {
      assertOpen(ctx);
      const gone = await driver.mirrorGone();
      if (gone !== undefined) {
        goneReported = true;
        throw new MirrorFileGoneError(gone);
      }
      if (syncLock === undefined || (await syncLock.confirm())) return;
      throw new SyncLockLostError(
        `the mirror ${where} is now synced by another wsmirror process: this one lost its sync lock (its Postgres connection `
          + 'ended, or its lock file was deleted) and the other took it meanwhile; this one stops syncing so that the two never send the same local edits twice '
          + '(wsmirror run lets the mirror go, and takes it back at the first cycle after the other has finished)',
      );
    },
    async close() {
      if (ctx.closed) return;
      ctx.closed = true;
      try {
        // Moved or deleted since the last cycle began (a stop by signal, the end of a sync):
        // what was committed is written where the file is now, and the log says where.
        const gone = await driver.mirrorGone().catch(() => undefined);
        if (gone !== undefined && !goneReported) ctx.logger?.warn({ err: { code: new MirrorFileGoneError(gone).code } }, gone);
        await driver.close();
      } finally {
        await syncLock?.release();
      }
    },
  };
}
