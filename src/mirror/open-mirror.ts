import { MirrorUnavailableError } from '../errors.ts';
import { createMirror } from './create-mirror.ts';
import type { SyncLock } from './dialect.ts';
import type { DialectDriver } from './dialect-driver.ts';
import { DIALECTS } from './dialects.ts';
import type { Mirror, OpenMirrorOptions } from './mirror.ts';
import { createContext } from './mirror-context.ts';
import { DEFAULT_PG_SCHEMA, parseMirrorUrl } from './mirror-url.ts';
import { catalogVersions, migrateCatalog } from './operations/migrate-catalog.ts';

/**
 * Opens `sqlite:PATH` (also `sqlite://PATH`) or `postgres://…` / `postgresql://…`, creating the
 * catalog tables when missing (unless `mustExist`). A malformed or unreachable URL throws
 * ConfigError naming the URL with its password masked. With `syncLock`, the lock comes first:
 * a process refused it has created and migrated nothing.
 */
export async function openMirror(url: string, options: OpenMirrorOptions = {}): Promise<Mirror> {
  const location = parseMirrorUrl(url);
  const pgSchema = options.pgSchema ?? DEFAULT_PG_SCHEMA;
  const dialect = DIALECTS[location.dialect];
  const where = location.dialect === 'postgres' ? `${location.display} (schema ${pgSchema})` : location.display;
  let syncLock: SyncLock | undefined;
  if (options.syncLock === true) {
    const taken = await dialect.takeSyncLock(location, { pgSchema, logger: options.logger });
    if ('heldBy' in taken) {
      throw new MirrorUnavailableError(
        `the mirror ${where} is in use by another wsmirror process (a run or sync of it${taken.heldBy === undefined ? '' : `: ${taken.heldBy}`}): one process syncs a mirror at a time; `
          + 'try again once it has finished (wsmirror run does, at each cycle), or stop the other, or give this one its own mirror '
          + '(mirror.url, or mirror.pgSchema on Postgres)',
      );
    }
    syncLock = taken;
  }
  let driver: DialectDriver;
  try {
    driver = await dialect.open(location, { pgSchema, mustExist: options.mustExist === true, writes: options.mustExist !== true || options.migrate === true });
  } catch (error) {
    await syncLock?.release();
    throw error;
  }
  const ctx = createContext(dialect, driver, options.logger);
  if (options.mustExist !== true || options.migrate === true) {
    try {
      if ((await catalogVersions(ctx)).older) {
        // Never under a process that syncs the mirror: an older version still running would
        // put its own triggers back, and the catalog would claim this version's.
        const lock = syncLock ?? await dialect.takeSyncLock(location, { pgSchema, logger: options.logger });
        if ('heldBy' in lock) {
          throw new MirrorUnavailableError(
            `the mirror ${where} needs bringing up to this version of wsmirror (an older one made it) and is in use by another wsmirror process`
              + `${lock.heldBy === undefined ? '' : ` (${lock.heldBy})`}, perhaps that older version: stop it, run wsmirror sync with this version, then this command again`,
          );
        }
        try {
          await migrateCatalog(ctx);
        } finally {
          if (lock !== syncLock) await lock.release();
        }
      }
      for (const warning of await driver.secureCapture()) ctx.logger?.warn({}, warning);
    } catch (error) {
      await driver.close();
      await syncLock?.release();
      throw error;
    }
  }
  return createMirror(ctx, location.display, syncLock, where);
}
