import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FUNCTIONS } from '../../../src/emulator/expression/functions.ts';

describe('docs/expressions.md', () => {
  const doc = readFileSync(new URL('../../../docs/expressions.md', import.meta.url), 'utf8');
  const rows = [...doc.matchAll(/^\| `([^`]+)` \| (.+) \|$/gm)].map((m) => [m[1]!, m[2]!] as const);

  it('lists every function with its signature and summary, and no other', () => {
    const documented = new Map(rows.filter(([call]) => /^[a-zA-Z]+\(/.test(call)));
    for (const fn of FUNCTIONS.values()) expect(documented.get(fn.signature), fn.name).toBe(fn.summary);
    expect(documented.size).toBe(FUNCTIONS.size);
  });
});
