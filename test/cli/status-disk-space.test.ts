import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { forEachDialect, type TestMirror } from '../helpers/dialects.ts';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { daemonEnv, mirrorEnv, runWsmirror } from '../helpers/processes.ts';
import { field } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * A full disk under a SQLite mirror fails every write, recording the failure in the mirror
 * included: `wsmirror status` must tell it from the filesystem itself. Filling a filesystem takes
 * root (a small tmpfs); instead the bound is set above the room the test's own filesystem really
 * has, and below it, so that the decision is taken on a real statfs of a real mirror's directory.
 */
forEachDialect('wsmirror status: room on the mirror\'s filesystem (real processes)', ({ dialect, fresh }) => {
  let emu: RunningEmulator;
  let t: TestMirror;

  beforeAll(async () => {
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('crm');
    await ws.createTable('crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    t = await fresh();
    const sync = await runWsmirror(['sync'], daemonEnv(emu, t), { killAfterMs: 30_000 });
    expect(sync.code, sync.stderr).toBe(0);
  });
  afterAll(async () => emu?.close());

  const status = (minFree: number) => runWsmirror(['status', '--json'], { ...mirrorEnv(t), WSMIRROR_MIRROR_MIN_FREE_SPACE: String(minFree) }, { killAfterMs: 30_000 });

  if (dialect === 'sqlite') {
    const dir = () => dirname(t.url.slice('sqlite:'.length));
    const room = () => {
      const fs = statfsSync(dir());
      return { free: fs.bavail * fs.bsize, total: fs.blocks * fs.bsize };
    };

    it('lists a filesystem with less room than the bound under "needs attention", naming it, its free and total space (exit 1)', async () => {
      const { free, total } = room();
      const res = await status(free * 2);
      expect(res.code, res.stderr).toBe(1);
      const report = JSON.parse(res.stdout) as { filesystem: { path: string; freeBytes: number; totalBytes: number; minFreeBytes: number }; attention: string[] };
      expect(report.filesystem.path).toBe(dir());
      expect(report.filesystem.totalBytes).toBe(total);
      // Other suites write meanwhile: the free space is the one statfs gave, give or take.
      expect(Math.abs(report.filesystem.freeBytes - free)).toBeLessThan(free / 10);
      expect(report.filesystem.minFreeBytes).toBe(free * 2);
      expect(report.attention).toEqual([expect.stringMatching(new RegExp(
        `^the filesystem of ${dir()} \\(the SQLite mirror and its -wal\\) has [0-9.]+[KMG]?B free of [0-9.]+[KMG]?B, less than .* \\(mirror\\.minFreeSpace\\)`,
      ))]);

      const text = await runWsmirror(['status'], { ...mirrorEnv(t), WSMIRROR_MIRROR_MIN_FREE_SPACE: String(free * 2) }, { killAfterMs: 30_000 });
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(/needs attention:\n {2}- the filesystem of .* has .* free of /);
    });

    it('says nothing while the filesystem has more room than the bound (exit 0)', async () => {
      const res = await status(Math.floor(room().free / 4));
      expect(res.code, res.stdout).toBe(0);
      expect((JSON.parse(res.stdout) as { attention: string[] }).attention).toEqual([]);
    });
  } else {
    it('has no filesystem of its own to watch on Postgres (the server\'s is its own)', async () => {
      const res = await status(Number.MAX_SAFE_INTEGER);
      expect(res.code, res.stdout).toBe(0);
      expect((JSON.parse(res.stdout) as { filesystem: unknown }).filesystem).toBeNull();
    });
  }
});
