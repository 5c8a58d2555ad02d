import type { EmulatorContext } from './context.ts';

/** Loads a `--seed` workspace into an empty store. */
export function loadSeed(_ctx: EmulatorContext, _seed: unknown): void {
  throw new Error('seed loading is not built yet');
}
