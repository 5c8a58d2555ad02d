import { createMirror } from './create-mirror.ts';
import { DIALECTS } from './dialects.ts';
import type { Mirror, OpenMirrorOptions } from './mirror.ts';
import { createContext } from './mirror-context.ts';
import { DEFAULT_PG_SCHEMA, parseMirrorUrl } from './mirror-url.ts';
import { migrateCatalog } from './operations/migrate-catalog.ts';

/**
 * Opens `sqlite:PATH` (also `sqlite://PATH`) or `postgres://…` / `postgresql://…`, creating the
 * catalog tables when missing (unless `mustExist`). A malformed or unreachable URL throws
 * ConfigError naming the URL with its password masked.
 */
export async function openMirror(url: string, options: OpenMirrorOptions = {}): Promise<Mirror> {
  const location = parseMirrorUrl(url);
  const pgSchema = options.pgSchema ?? DEFAULT_PG_SCHEMA;
  const driver = await DIALECTS[location.dialect].open(location, {
    pgSchema,
    mustExist: options.mustExist === true,
  });
  const ctx = createContext(driver, options.logger);
  if (options.mustExist !== true) {
    try {
      await migrateCatalog(ctx);
    } catch (error) {
      await driver.close();
      throw error;
    }
  }
  return createMirror(ctx, location.display, location.dialect === 'postgres' ? `${location.display} (schema ${pgSchema})` : location.display);
}
