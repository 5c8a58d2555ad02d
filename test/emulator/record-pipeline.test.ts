import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The records pipeline keeps one direction: each stage imports only stages before it (see the
// header of src/emulator/store/record-store.ts), type imports included.
const STAGES = ['record-plans', 'record-values', 'record-statements', 'record-checks', 'record-expressions', 'record-store', 'record-list', 'record-import'];

describe('the records pipeline', () => {
  it.each(STAGES.map((s, i) => [s, i] as const))('%s imports only earlier stages', (stage, index) => {
    const source = readFileSync(new URL(`../../src/emulator/store/${stage}.ts`, import.meta.url), 'utf8');
    const imported = [...source.matchAll(/from '\.\/(record-[a-z-]+)\.ts'/g)].map((m) => m[1]!);
    for (const other of imported) {
      expect(STAGES.indexOf(other), `${stage} imports ${other}`).toBeLessThan(index);
      expect(STAGES.indexOf(other)).toBeGreaterThanOrEqual(0);
    }
  });
});
