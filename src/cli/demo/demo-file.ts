/**
 * The demo's own file: it writes only a file it created itself (a new file, or one an earlier
 * demo run made), and each run starts it again from nothing.
 */
import { existsSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { DEMO_CREATOR, readClaim, type MirrorClaim } from '../../daemon/mirror-claim.ts';
import { ConfigError } from '../../errors.ts';
import type { Mirror } from '../../mirror/index.ts';

export async function readSeed(file: string): Promise<{ name: string; json: unknown }> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new ConfigError(`the demo workspace ${file} cannot be read: ${(error as Error).message}`, { cause: error });
  }
  const seed = json as { name?: unknown };
  return { name: typeof seed.name === 'string' ? seed.name : 'demo workspace', json };
}

/**
 * The demo writes only files it created itself: a new file, or one an earlier demo run made
 * (marked `created-by demo`, see mirror-claim.ts, and mirroring the demo workspace). Anything
 * else is refused before a byte of it is written: a sync would drop its tables.
 */
export async function checkExistingFile(
  path: string, flag: string, workspaceId: string, openMirror: (url: string, o: { mustExist: true }) => Promise<Mirror>,
): Promise<'new' | 'earlier-demo'> {
  if (!existsSync(path)) return 'new';
  let mirror: Mirror;
  try {
    mirror = await openMirror(`sqlite:${path}`, { mustExist: true });
  } catch (error) {
    throw new ConfigError(`--db ${flag}: ${path} exists and is not a demo mirror (${(error as Error).message}); choose a new file with --db`);
  }
  let claim: MirrorClaim;
  try {
    claim = await readClaim(mirror);
  } finally {
    await mirror.close();
  }
  if (claim.createdBy !== DEMO_CREATOR) {
    const what = claim.workspaceId === undefined ? 'a mirror' : `a mirror of workspace ${claim.workspaceId}`;
    throw new ConfigError(`--db ${flag}: ${path} is ${what} not created by wsmirror demo, which writes only its own files; choose a new file with --db`);
  }
  if (claim.workspaceId !== workspaceId) {
    throw new ConfigError(`--db ${flag}: ${path} mirrors workspace ${claim.workspaceId ?? '(none recorded)'}, not the demo's ${workspaceId}; choose a new file with --db`);
  }
  return 'earlier-demo';
}

/**
 * Each run serves a new sample workspace, so an earlier run's file is made again from nothing:
 * records added or removed while it ran, and edits still in its outbox, belong to an emulator
 * that is gone. Afterwards the file holds exactly the sample workspace.
 */
export function removeDemoFile(path: string): void {
  for (const suffix of ['', '-wal', '-shm', '-journal']) rmSync(`${path}${suffix}`, { force: true });
}
