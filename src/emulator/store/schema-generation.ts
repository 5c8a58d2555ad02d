import type { Db } from './db.ts';

/**
 * A counter that moves whenever the schema may have changed (every schema transaction, before and
 * after it). Caches derived from the schema — compiled expressions — keep the generation they were
 * built at and are rebuilt when it moves, so they are never stale and cost nothing when the schema
 * holds still.
 */
const generations = new WeakMap<Db, number>();

export function schemaGeneration(db: Db): number {
  return generations.get(db) ?? 0;
}

export function bumpSchemaGeneration(db: Db): void {
  generations.set(db, schemaGeneration(db) + 1);
}
