import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The import boundaries of docs/architecture.md. Each folder of src/ lists the entries of src/ it
 * may import; every other entry is forbidden. The test parses every import and export-from of
 * every source file, and checks that the table of the doc says the same as this one.
 */
const SRC = resolve(import.meta.dirname, '../src');
const DOC = resolve(import.meta.dirname, '../docs/architecture.md');

/** The top-level entries of src/. */
const ENTRIES = ['api', 'cli', 'client', 'conformance', 'daemon', 'emulator', 'errors.ts', 'mirror', 'sync'];

/** `src/cli/` may import everything (the emulator only through its index), checked below. */
const MAY_IMPORT: Record<string, string[]> = {
  api: [],
  emulator: ['api'],
  client: ['api', 'errors.ts'],
  mirror: ['api', 'errors.ts'],
  sync: ['client', 'mirror', 'api', 'errors.ts'],
  daemon: ['sync', 'client', 'mirror', 'api', 'errors.ts'],
  // The suite is a user of the public API: it must run against any endpoint, not only the emulator.
  conformance: ['api', 'client'],
};

function forbiddenFor(folder: string): string[] {
  return ENTRIES.filter((e) => e !== folder && !MAY_IMPORT[folder]!.includes(e));
}

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

/** A cell of the doc's table as entries of src/: `src/api/` → api, `src/errors.ts` → errors.ts. */
function cellEntries(cell: string): string[] {
  return cell
    .split(',')
    .map((part) => part.trim().replace(/`/g, '').replace(/^src\//, '').replace(/\/$/, ''))
    .filter((name) => ENTRIES.includes(name));
}

/** The Boundaries table of docs/architecture.md: folder → [may import, never imports]. */
function docTable(): Map<string, [string, string]> {
  const rows = new Map<string, [string, string]>();
  for (const line of readFileSync(DOC, 'utf8').split('\n')) {
    const m = /^\| `src\/([a-z]+)\/` \| (.*?) \| (.*?) ?\|$/.exec(line);
    if (m) rows.set(m[1]!, [m[2]!, m[3]!]);
  }
  return rows;
}

describe('architecture boundaries', () => {
  it('src/ holds the entries the table speaks of', () => {
    expect(readdirSync(SRC).sort()).toEqual(ENTRIES);
  });

  it('docs/architecture.md states the same table, each row whole', () => {
    const rows = docTable();
    expect([...rows.keys()].sort()).toEqual(ENTRIES.filter((e) => e !== 'errors.ts'));
    for (const [folder, may] of Object.entries(MAY_IMPORT)) {
      const [mayCell, neverCell] = rows.get(folder)!;
      expect(cellEntries(mayCell).sort(), `src/${folder}/ may import`).toEqual([...may].sort());
      const never = neverCell === 'anything else in `src/`' ? forbiddenFor(folder) : cellEntries(neverCell);
      expect(never.sort(), `src/${folder}/ never imports`).toEqual(forbiddenFor(folder).sort());
    }
    expect(rows.get('cli')).toEqual(['everything (the emulator only through `src/emulator/index.ts`)', '']);
  });

  for (const folder of Object.keys(MAY_IMPORT)) {
    const forbidden = forbiddenFor(folder);
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

  it('src/mirror/: each dialect folder is reached only through dialects.ts, and folders never import each other', () => {
    const mirror = join(SRC, 'mirror');
    const dialectFolders = readdirSync(mirror).filter((name) => statSync(join(mirror, name)).isDirectory() && name !== 'operations');
    expect(dialectFolders.sort()).toEqual(['postgres', 'sqlite']);
    const violations: string[] = [];
    for (const file of sourceFiles(mirror)) {
      const from = relative(mirror, file).split(/[\\/]/);
      const fromFolder = from.length > 1 ? from[0] : undefined;
      for (const spec of importsOf(file)) {
        const to = relative(mirror, resolve(dirname(file), spec)).split(/[\\/]/);
        const toFolder = to.length > 1 ? to[0] : undefined;
        if (toFolder === undefined || !dialectFolders.includes(toFolder) || toFolder === fromFolder) continue;
        const viaRegistry = relative(mirror, file) === 'dialects.ts' && to[1] === 'dialect.ts';
        if (!viaRegistry) violations.push(`${relative(SRC, file)} imports ${spec}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('no files of src/ import each other in a loop, type imports included', () => {
    // A loop ties its files into one: none can be read, tested or moved without the others.
    const files = sourceFiles(SRC);
    const edges = new Map(files.map((file) => [file, importsOf(file).filter((s) => s.startsWith('.')).map((s) => resolve(dirname(file), s))]));
    expect(importLoops(edges).map((loop) => loop.map((f) => relative(SRC, f)).join(' -> '))).toEqual([]);
  });

  it('the loop finder finds a loop', () => {
    // Guards the guard above with a loop of three files and a file outside it.
    const loop = importLoops(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']], ['d', ['a']]]));
    expect(loop.map((l) => [...l].sort())).toEqual([['a', 'b', 'c']]);
  });

  it('the import scanner sees static, re-exported and dynamic imports', () => {
    // Guards the guard: a scanner that found nothing would make every check above pass.
    const found = importsOf(join(SRC, 'cli', 'commands', 'emulator.ts'));
    expect(found).toContain('../../emulator/index.ts');
    expect(importsOf(join(SRC, 'api', 'index.ts')).length).toBeGreaterThan(5);
  });
});

/** The loops of an import graph (its strongly connected components of more than one file; Tarjan). */
function importLoops(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) loops.push(component);
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return loops;
}
