// The bundle the scenarios that start `wsmirror` processes measure (bin/bundle.mjs).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * A measured process should run as it ships: from the bundle `npm ci` builds. A checkout whose
 * sources changed since runs them instead (bin/wsmirror), which starts several times slower and
 * takes 10–20 MiB more, so the bundle is built again first when it is stale.
 */
export async function freshBundle(): Promise<'fresh' | 'rebuilt'> {
  const bundler = new URL('../bin/bundle.mjs', import.meta.url);
  const { freshBundle: isFresh } = (await import(bundler.href)) as { freshBundle(): string | undefined };
  if (isFresh() !== undefined) return 'fresh';
  const built = spawnSync(process.execPath, [fileURLToPath(bundler)], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`bin/bundle.mjs exited ${built.status}`);
  return 'rebuilt';
}
