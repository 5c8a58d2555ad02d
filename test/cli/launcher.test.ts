import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WSMIRROR_BIN } from '../helpers/processes.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

function run(file: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(file, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', fail);
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

describe('bin/wsmirror', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-launcher-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('starts on the Node that npm ci installed, with no node on PATH, also through a symlink', async () => {
    // PATH has the one tool the launcher uses, readlink, and no node.
    const tools = join(dir, 'tools');
    mkdirSync(tools);
    symlinkSync(execFileSync('sh', ['-c', 'command -v readlink'], { encoding: 'utf8' }).trim(), join(tools, 'readlink'));
    const noNode = { PATH: tools };
    const direct = await run(WSMIRROR_BIN, ['--version'], noNode);
    expect(direct, direct.stderr).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
    // npm links bins like this into node_modules/.bin or a global bin folder.
    symlinkSync(WSMIRROR_BIN, join(dir, 'wsmirror'));
    const linked = await run(join(dir, 'wsmirror'), ['--version'], noNode);
    expect(linked, linked.stderr).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('stops with one line naming the Node it needs, and exit code 78, on a Node that is too old', async () => {
    const engines = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }).engines.node;
    expect(engines).toMatch(/^>=\d+\.\d+$/);
    const needed = engines.slice(2);
    // Node 20 as far as wsmirror can tell: the check must run before any TypeScript is loaded.
    const pretend = `data:text/javascript,Object.defineProperty(process.versions, "node", { value: "20.11.1" })`;
    const res = await run(process.execPath, ['--import', pretend, WSMIRROR_BIN, 'sync'], { PATH: process.env['PATH'] ?? '' });
    expect(res.code).toBe(78);
    expect(res.stdout).toBe('');
    expect(res.stderr.split('\n')).toEqual([
      `wsmirror: needs Node.js ${needed} or newer, but ${process.execPath} is v20.11.1; run \`npm ci\` in ${ROOT} to install the Node it runs on (or install Node.js 24)`,
      '',
    ]);
  });
});
