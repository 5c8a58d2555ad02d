// `npm run bench [-- <scenario>... [--option=value]...]`: runs the named scenarios, or every
// `bench/*.ts` that exports `run()`, prints each result as JSON and saves it under bench/results/.
// A named file without `run()` is run as a script of its own, with the flags.
import { spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

export interface BenchOptions {
  /** `--key=value` flags after the scenario names (`--key` alone is `true`). */
  readonly [key: string]: string | true;
}

interface Scenario {
  run(options: BenchOptions): Promise<unknown>;
}

const here = new URL('.', import.meta.url);

function parseArgs(argv: readonly string[]): { names: string[]; options: BenchOptions } {
  const names: string[] = [];
  const options: Record<string, string | true> = {};
  for (const arg of argv) {
    const m = /^--([^=]+)(?:=(.*))?$/.exec(arg);
    if (m) options[m[1]!] = m[2] ?? true;
    else names.push(arg);
  }
  return { names, options };
}

/** Read as text first: importing a file that is a script by itself would run it. */
async function exportsRun(name: string): Promise<boolean> {
  const text = await readFile(new URL(`./${name}.ts`, here), 'utf8');
  return /^export\s+(async\s+)?function\s+run\b|^export\s+const\s+run\b|^export\s*\{[^}]*\brun\b/m.test(text);
}

async function load(name: string): Promise<Scenario | undefined> {
  if (!(await exportsRun(name))) return undefined;
  const mod = (await import(new URL(`./${name}.ts`, here).href)) as Partial<Scenario>;
  return typeof mod.run === 'function' ? (mod as Scenario) : undefined;
}

function runScript(name: string, argv: readonly string[]): Promise<number> {
  const child = spawn(process.execPath, [fileURLToPath(new URL(`./${name}.ts`, here)), ...argv], { stdio: 'inherit' });
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

async function main(): Promise<number> {
  const { names, options } = parseArgs(process.argv.slice(2));
  const available = (await readdir(here))
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts')
    .map((f) => f.slice(0, -3))
    .sort();
  for (const name of names) {
    if (!available.includes(name)) {
      process.stderr.write(`bench: no scenario ${name}; available: ${available.join(', ')}\n`);
      return 2;
    }
  }
  const chosen = names.length > 0 ? names : available;
  const machine = {
    nproc: availableParallelism(),
    memoryBytes: totalmem(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
  await mkdir(new URL('./results/', here), { recursive: true });
  let failed = 0;
  for (const name of chosen) {
    const scenario = await load(name);
    if (!scenario) {
      if (names.includes(name)) {
        const code = await runScript(name, process.argv.slice(2).filter((a) => a.startsWith('--')));
        if (code !== 0) failed++;
      }
      continue;
    }
    const startedAt = new Date().toISOString();
    try {
      const result = await scenario.run(options);
      const record = { scenario: name, startedAt, machine, options, result };
      const text = JSON.stringify(record, null, 2);
      process.stdout.write(`${text}\n`);
      const file = new URL(`./results/${name}-${startedAt.replace(/[:.]/g, '-')}.json`, here);
      await writeFile(file, `${text}\n`);
      process.stderr.write(`bench: saved ${file.pathname}\n`);
    } catch (error) {
      failed++;
      process.stderr.write(`bench: ${name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    }
  }
  return failed === 0 ? 0 : 1;
}

// Only as the entry point: scenarios import this file's types.
if (import.meta.main) process.exitCode = await main();
