// The sync engine: pure orchestration of the client and the mirror.
export { SyncEngine, cycleProblems } from './engine.ts';
export { tableLabel } from '../mirror/catalog.ts';
export type { CycleOptions, CycleReport, SyncEngineDeps, TableReport } from './engine.ts';
export { SYNC_DEFAULTS } from './sync-options.ts';
export type { SyncOptions } from './sync-options.ts';
export type { SyncLogger, SyncObserver } from './observer.ts';
export type { ChangeFeed, Upstream } from './upstream.ts';
export { CONFLICT_POLICIES } from './push/conflict-policy.ts';
export type { ConflictPolicy, ConflictPolicyRule } from './push/conflict-policy.ts';
export { lagBoundMs, lastPullMs, tableLagMs } from './table-lag.ts';
export type { ScanCheckpoint } from './scan-checkpoint.ts';
export { decodeCheckpoint } from './scan-checkpoint.ts';
export { refusedTables } from './name-rule.ts';
export { decodeRefusals, REFUSED_CURSOR_KEY } from './refused-tables-cursor.ts';
export type { StoredRefusal } from './refused-tables-cursor.ts';
export { tooWideTables } from './width-rule.ts';
export { leavingMissingTables } from './missing-tables.ts';
