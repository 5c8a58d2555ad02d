/**
 * The sync lock is another process's (`Dialect.takeSyncLock`, `Mirror.syncLockHolder`): who holds
 * it, when that can be told.
 */
export interface SyncLockHeld {
  readonly heldBy: string | undefined;
}
