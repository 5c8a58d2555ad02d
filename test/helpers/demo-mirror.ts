import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { WorkspaceClient } from '../../src/client/index.ts';
import { SyncEngine } from '../../src/sync/index.ts';
import type { TestMirror } from './dialects.ts';
import { quoteId } from './dialects.ts';
import { startEmulator, type RunningEmulator } from './emulator.ts';
import { UpstreamWorkspace } from './workspace.ts';

const SEED = JSON.parse(readFileSync(join(import.meta.dirname, '../../config/emulator-seed.example.json'), 'utf8')) as unknown;

/**
 * The sample workspace of `wsmirror demo`, served by an emulator and mirrored by one sync cycle
 * into a fresh mirror; `prepare` may add records upstream first. On Postgres the separate
 * connection's search_path is the mirror's schema, so queries name tables as users write them.
 */
export async function mirrorDemoWorkspace(
  fresh: () => Promise<TestMirror>, prepare?: (upstream: UpstreamWorkspace) => Promise<void>,
): Promise<{ emu: RunningEmulator; t: TestMirror }> {
  const emu = await startEmulator({ seed: SEED });
  await prepare?.(new UpstreamWorkspace(emu));
  const t = await fresh();
  const client = new WorkspaceClient({ baseUrl: emu.url, apiKey: emu.apiKey, workspaceId: emu.workspaceId });
  const report = await new SyncEngine({ client, mirror: t.mirror }).runCycle();
  expect(report.tables.filter((r) => r.action === 'failed')).toEqual([]);
  if (t.pgSchema !== undefined) await t.sql(`SET search_path = ${quoteId(t.pgSchema)}, public`);
  return { emu, t };
}
