import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A SQLite mirror on a filesystem that fills up: SQLite says only "database or disk is full",
 * and wsmirror names the mirror file and the filesystem, with its free space. A real full
 * filesystem: a small tmpfs, which needs root (and the right to mount); elsewhere the test is
 * skipped.
 */
describe('SQLite: the mirror\'s filesystem full (real processes)', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-full-'));
  const small = join(dir, 'small');
  const file = join(small, 'm.db');
  let mounted = false;

  beforeAll(async () => {
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'notes', { hasHistory: true }, [field('body', 'string')]);
    // About 3 MB of records for a filesystem of 1 MB.
    await ws.createRecords('crm', 'notes', Array.from({ length: 300 }, (_, i) => ({ body: `${i} ${'x'.repeat(10_000)}` })));
    mkdirSync(small);
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', small], { stdio: 'ignore' });
      mounted = true;
    } catch {
      // Not root, or no right to mount here.
    }
  });
  afterAll(async () => {
    await emu?.close();
    if (mounted) execFileSync('umount', [small]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('sync fails naming the mirror file and its filesystem\'s free space', async (ctx) => {
    if (!mounted) ctx.skip();
    const res = await runWsmirror(['sync'], daemonEnv(emu, { url: `sqlite:${file}` }), { killAfterMs: 60_000, cwd: dir });
    expect(res.code, res.stderr).toBe(1);
    expect(res.stderr).toContain('database or disk is full');
    expect(res.stderr).toContain(`database or disk is full (the SQLite mirror ${file}): the filesystem of ${small} has `);
  }, 90_000);
});
