/**
 * The bundle that `bin/wsmirror` starts from when it is there and not older than the sources
 * (DEVELOPERS.md, "The bundle"): the CLI and everything it imports, bundled by esbuild into a
 * few dozen files in `node_modules/.cache/wsmirror-bundle` of the checkout, with one file per
 * module that a command imports on demand. Loading those instead of ~700 TypeScript and package
 * modules halves the CPU time of a short command and cuts its memory by a third (bench/README.md,
 * "Start-up and memory").
 *
 * `npm ci` and `npm install` build it (package.json's `prepare` runs this file), so a checkout
 * never holds a bundle older than its dependencies: reinstalling empties node_modules. Editing,
 * pulling or checking out sources makes it stale, and wsmirror then runs the sources until
 * `npm run build`. Plain JavaScript, so that whatever Node runs npm can run it.
 */
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CHECKOUT = fileURLToPath(new URL('..', import.meta.url));
// Three folders below the checkout, like src/cli/commands/: the one module that finds a file of
// the checkout through its own URL (DEMO_SEED_FILE, `../../../config/`) finds it from here too.
const FOLDER = join(CHECKOUT, 'node_modules', '.cache', 'wsmirror-bundle');
const ENTRY = join(CHECKOUT, 'src', 'cli', 'main.ts');
/** What bin/wsmirror reads at each start: when the build began and which sources went in. */
const MANIFEST = 'manifest.json';
/** esbuild's account of which sources and packages went into which output file (for tests). */
const METAFILE = join(FOLDER, 'meta.json');

/**
 * The URL of the bundle's entry module, or undefined when there is none or one of its sources
 * (or the list of them) changed after its build began. Never throws: any doubt means sources.
 */
export function freshBundle() {
  try {
    const { builtAtMs, sources } = JSON.parse(readFileSync(join(FOLDER, MANIFEST), 'utf8'));
    if (typeof builtAtMs !== 'number' || !Array.isArray(sources) || sources.length === 0) return undefined;
    for (const source of sources) {
      if (statSync(join(CHECKOUT, source)).mtimeMs > builtAtMs) return undefined;
    }
    return pathToFileURL(join(FOLDER, 'main.js')).href;
  } catch {
    return undefined;
  }
}

/**
 * Builds the bundle. Native modules and what is loaded by path at run time stay outside:
 * better-sqlite3 (its binary), pg-native (pg's optional native client), and the packages the
 * sources load through `createRequire` (yaml, pino-pretty, cli-progress), which esbuild leaves.
 */
export async function buildBundle() {
  const { build } = await import('esbuild');
  const builtAtMs = Date.now();
  rmSync(FOLDER, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: CHECKOUT,
    entryPoints: [ENTRY],
    outdir: FOLDER,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    // Error and class names stay as written (esbuild renames clashing top-level names otherwise).
    keepNames: true,
    external: ['better-sqlite3', 'pg-native'],
    // The packages written as CommonJS call `require`, which an ES module does not have.
    banner: { js: "import { createRequire as createRequireOfBundle } from 'node:module'; const require = createRequireOfBundle(import.meta.url);" },
    metafile: true,
    logLevel: 'warning',
  });
  const sources = Object.keys(result.metafile.inputs)
    .map((input) => relative(CHECKOUT, join(CHECKOUT, input)))
    .filter((input) => !input.split(sep).includes('node_modules'))
    .sort();
  writeFileSync(METAFILE, JSON.stringify(result.metafile));
  // Without a package.json of its own the folder has no module type, and Node would parse each
  // file to find out whether it is an ES module (a fifth of a short command's CPU).
  writeFileSync(join(FOLDER, 'package.json'), '{ "type": "module" }\n');
  // Written last: a build that stopped half way leaves no manifest, so no bundle is used.
  writeFileSync(join(FOLDER, MANIFEST), JSON.stringify({ builtAtMs, sources }));
  return { folder: FOLDER, sources: sources.length };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  buildBundle().then(
    ({ folder, sources }) => process.stdout.write(`wsmirror: bundled ${sources} sources into ${relative(CHECKOUT, folder)}\n`),
    (error) => {
      // Never fails an install: wsmirror then runs from its sources, only starts slower.
      rmSync(FOLDER, { recursive: true, force: true });
      process.stderr.write(`wsmirror: no bundle built, wsmirror will run from its sources (${error instanceof Error ? error.message : error})\n`);
    },
  );
}
