import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The import boundaries of docs/architecture.md. Each folder of src/ lists the folders it must
 * never import; the test parses every import and export-from of every source file.
 */
const SRC = resolve(import.meta.dirname, '../src');

const FORBIDDEN: Record<string, string[]> = {
  api: ['client', 'mirror', 'sync', 'daemon', 'cli', 'emulator', 'errors.ts'],
  emulator: ['client', 'mirror', 'sync', 'daemon', 'cli', 'errors.ts'],
  client: ['mirror', 'sync', 'daemon', 'cli', 'emulator'],
  mirror: ['client', 'sync', 'daemon', 'cli', 'emulator'],
  sync: ['daemon', 'cli', 'emulator'],
  daemon: ['cli', 'emulator'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Top-level entry of src/ an import lands in (`client`, `errors.ts`, …), or undefined outside src/. */
function landing(fromFile: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative(SRC, resolve(dirname(fromFile), specifier));
  if (target.startsWith('..')) return undefined;
  return target.split(/[\\/]/)[0];
}

const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT_RE)].map((m) => (m[1] ?? m[2])!);
}

describe('architecture boundaries', () => {
  for (const [folder, forbidden] of Object.entries(FORBIDDEN)) {
    it(`src/${folder}/ imports none of ${forbidden.join(', ')}`, () => {
      const violations: string[] = [];
      for (const file of sourceFiles(join(SRC, folder))) {
        for (const spec of importsOf(file)) {
          const target = landing(file, spec);
          if (target && forbidden.includes(target)) violations.push(`${relative(SRC, file)} imports ${spec}`);
        }
      }
      expect(violations).toEqual([]);
    });
  }

  it('src/cli/ reaches the emulator only through its public entry', () => {
    const violations: string[] = [];
    for (const file of sourceFiles(join(SRC, 'cli'))) {
      for (const spec of importsOf(file)) {
        const abs = resolve(dirname(file), spec);
        const rel = relative(SRC, abs);
        if (rel.startsWith('emulator') && rel !== join('emulator', 'index.ts')) violations.push(`${relative(SRC, file)} imports ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('the import scanner sees static, re-exported and dynamic imports', () => {
    // Guards the guard: a scanner that found nothing would make every check above pass.
    const found = importsOf(join(SRC, 'cli', 'commands', 'emulator.ts'));
    expect(found).toContain('../../emulator/index.ts');
    expect(importsOf(join(SRC, 'api', 'index.ts')).length).toBeGreaterThan(5);
  });
});
