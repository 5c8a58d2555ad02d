import type { EmulatorContext } from '../context.ts';
import { bumpSchemaGeneration } from './schema-generation.ts';

/**
 * What every schema mutation shares, whether of modules and tables (schema-store.ts) or of fields
 * (field-store.ts): one transaction per mutation, the no-op comparison, the role alias. A file of
 * its own so that neither of the two imports the other for them.
 */

/** `user` is a deprecated alias of `editor`: stored and returned as `editor`, without duplicates. */
export function normalizeRoles(roles: readonly string[]): string[] {
  return [...new Set(roles.map((r) => (r === 'user' ? 'editor' : r)))];
}

/** One schema transaction; caches built from the schema see it as a new generation. */
export function transaction<T>(ctx: EmulatorContext, fn: () => T): T {
  bumpSchemaGeneration(ctx.db);
  try {
    return ctx.db.transaction(fn)();
  } finally {
    bumpSchemaGeneration(ctx.db);
  }
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
