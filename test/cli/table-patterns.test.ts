import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A tables.include or tables.exclude pattern that matches no upstream table is most likely a
 * typo; one in include drops the tables it was meant to keep. `check` lists each such pattern,
 * and a sync warns each time it reads the workspace. Real processes.
 */
describe('table patterns that match no upstream table (real processes)', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-patterns-'));
  beforeAll(async () => {
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'deals', { hasHistory: true }, [{ name: 'title', type: 'string', labels: { '': 'Title' } }]);
    await ws.createTable('crm', 'notes', { hasHistory: false }, [{ name: 'body', type: 'string', labels: { '': 'Body' } }]);
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const patterns = { WSMIRROR_TABLES_INCLUDE: 'crm.dealz,crm.notes', WSMIRROR_TABLES_EXCLUDE: 'crm.deals,hr.*' };

  it('check warns about each of them (text and --json), and still exits 0', async () => {
    const env = daemonEnv(emu, { url: `sqlite:${join(dir, 'check.db')}` }, patterns);
    const text = await runWsmirror(['check'], env, { cwd: dir });
    expect(text.code, text.stderr).toBe(0);
    const warnings = text.stdout.split('\n').filter((l) => l.startsWith('warn'));
    expect(warnings).toEqual([
      'warn tables.include pattern "crm.dealz" (WSMIRROR_TABLES_INCLUDE) matches no upstream table: nothing is mirrored through it',
      'warn tables.exclude pattern "hr.*" (WSMIRROR_TABLES_EXCLUDE) matches no upstream table: it excludes nothing',
    ]);
    const json = await runWsmirror(['check', '--json'], env, { cwd: dir });
    expect(json.code, json.stderr).toBe(0);
    expect((JSON.parse(json.stdout) as { unmatchedPatterns: unknown }).unmatchedPatterns).toEqual([
      { setting: 'tables.include', pattern: 'crm.dealz', source: 'WSMIRROR_TABLES_INCLUDE', message: warnings[0]!.slice('warn '.length) },
      { setting: 'tables.exclude', pattern: 'hr.*', source: 'WSMIRROR_TABLES_EXCLUDE', message: warnings[1]!.slice('warn '.length) },
    ]);
  });

  it('names the configuration file when the pattern was set there, not a variable that is unset', async () => {
    const configFile = join(dir, 'patterns.yaml');
    writeFileSync(configFile, 'tables:\n  include: [crm.dealz, crm.notes]\n');
    const env = daemonEnv(emu, { url: `sqlite:${join(dir, 'check-file.db')}` });
    const text = await runWsmirror(['check', '--config', configFile], env, { cwd: dir });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout.split('\n').filter((l) => l.startsWith('warn'))).toEqual([
      `warn tables.include pattern "crm.dealz" (set in ${configFile}) matches no upstream table: nothing is mirrored through it`,
    ]);
    const json = await runWsmirror(['check', '--json', '--config', configFile], env, { cwd: dir });
    expect((JSON.parse(json.stdout) as { unmatchedPatterns: unknown }).unmatchedPatterns).toEqual([
      { setting: 'tables.include', pattern: 'crm.dealz', source: configFile, message: `tables.include pattern "crm.dealz" (set in ${configFile}) matches no upstream table: nothing is mirrored through it` },
    ]);
    const sync = await runWsmirror(['sync', '--log-format', 'json', '--config', configFile], { ...env, WSMIRROR_MIRROR_URL: `sqlite:${join(dir, 'sync-file.db')}` }, { cwd: dir });
    expect(sync.code, sync.stderr).toBe(0);
    expect(sync.stdout).toContain(`tables.include pattern \\"crm.dealz\\" (set in ${configFile})`);
    expect(sync.stdout).not.toContain('WSMIRROR_TABLES_INCLUDE');
  });

  it('a sync logs a warning naming each of them when it reads the workspace', async () => {
    const res = await runWsmirror(['sync', '--log-format', 'json'], daemonEnv(emu, { url: `sqlite:${join(dir, 'sync.db')}` }, patterns), { cwd: dir });
    expect(res.code, res.stderr).toBe(0);
    const warnings = res.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l['level'] === 'warn' || l['level'] === 40);
    expect(warnings.map((w) => [w['setting'], w['pattern']])).toEqual([['tables.include', 'crm.dealz'], ['tables.exclude', 'hr.*']]);
    expect(String(warnings[0]!['msg'])).toContain('matches no upstream table');
  });
});
