import type { EmulatorContext } from './context.ts';
import { applySeed, parseSeed } from './seed.ts';
import { clearDatabase } from './store/database.ts';
import { setWorkspaceName } from './store/schema-store.ts';

const INITIALIZED = 'initialized_at';

function isInitialized(ctx: EmulatorContext): boolean {
  return ctx.db.prepare('SELECT 1 FROM meta WHERE key = ?').get(INITIALIZED) !== undefined;
}

function markInitialized(ctx: EmulatorContext): void {
  ctx.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(INITIALIZED, new Date().toISOString());
}

/**
 * Prepares the store at start. A `--seed` is always checked, but loaded only into a new store:
 * a `--data` file that already holds a workspace keeps its state across restarts. An explicit
 * workspace name wins over the seed's and over the stored one.
 */
export function initializeWorkspace(ctx: EmulatorContext): void {
  const seed = ctx.options.seed === undefined ? undefined : parseSeed(ctx.options.seed);
  ctx.db.transaction(() => {
    if (!isInitialized(ctx)) {
      if (seed) applySeed(ctx, seed);
      markInitialized(ctx);
    }
    if (ctx.options.workspaceName !== undefined) setWorkspaceName(ctx, ctx.options.workspaceName);
  })();
}

/**
 * The admin reset: an empty workspace (optionally loaded from `seedValue`), real time, no faults.
 * A seed that fails leaves everything as it was.
 */
export function resetWorkspace(ctx: EmulatorContext, seedValue: unknown): void {
  const seed = seedValue === undefined ? undefined : parseSeed(seedValue, 'body');
  ctx.db.transaction(() => {
    clearDatabase(ctx.db);
    markInitialized(ctx);
    if (ctx.options.workspaceName !== undefined) setWorkspaceName(ctx, ctx.options.workspaceName);
    if (seed) applySeed(ctx, seed, 'body');
  })();
  ctx.clock.reset();
  ctx.faults.reset();
  ctx.changes.reset();
}
