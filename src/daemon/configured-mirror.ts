/**
 * The mirror of a validated configuration. Every command opens it here, so `status`, `outbox`
 * and a sync always open the same database (and, on Postgres, the same schema).
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { MirrorFileMissingError } from '../errors.ts';
import type { Mirror } from '../mirror/mirror.ts';
import { parseMirrorUrl } from '../mirror/mirror-url.ts';
import { openMirror } from '../mirror/open-mirror.ts';
import type { Config, LocalConfig, MirrorConfig } from './config-types.ts';
import type { Logger } from './logger.ts';
import { describeSettingSource } from './setting-source.ts';

/**
 * The mirror URL to open: for SQLite, `sqlite:` plus the path the configuration already made
 * absolute against the working directory (not the configuration file's directory).
 */
export function mirrorUrlOf(config: Pick<Config, 'mirror'>): string {
  return config.mirror.dialect === 'sqlite' ? `sqlite:${config.mirror.path}` : config.mirror.url;
}

export interface OpenConfiguredMirrorOptions {
  logger: Logger;
  /** Refuse a mirror that does not exist yet instead of creating it (read-only commands). */
  mustExist?: boolean;
  /** With `mustExist`: bring an older catalog to this layout (commands that write): see OpenMirrorOptions. */
  migrate?: boolean;
  /** Take the sync lock first (commands that sync): see OpenMirrorOptions. */
  syncLock?: boolean;
}

export async function openConfiguredMirror(config: Pick<Config | LocalConfig, 'mirror'>, options: OpenConfiguredMirrorOptions): Promise<Mirror> {
  try {
    return await openMirror(mirrorUrlOf(config), {
      pgSchema: config.mirror.pgSchema,
      logger: options.logger,
      ...(options.mustExist === true ? { mustExist: true } : {}),
      ...(options.migrate === true ? { migrate: true } : {}),
      ...(options.syncLock === true ? { syncLock: true } : {}),
    });
  } catch (error) {
    if (!(error instanceof MirrorFileMissingError) || config.mirror.dialect !== 'sqlite') throw error;
    const configFile = configFileElsewhere(config.mirror);
    if (configFile === null) throw error;
    throw new MirrorFileMissingError(missingRelativeFile(config.mirror, configFile, error.path), error.path);
  }
}

/**
 * A relative SQLite path set in a configuration file of another directory than the working one:
 * the mirror may well be beside that file. Otherwise (no file, or the file here), the missing
 * mirror is one not made yet, and the plain message (run wsmirror sync) is the right one.
 */
function configFileElsewhere(mirror: Extract<MirrorConfig, { dialect: 'sqlite' }>): string | null {
  const source = mirror.urlSource;
  if (mirror.relativeTo === null || typeof source !== 'object' || !('configFile' in source) || source.configFile === null) return null;
  return resolve(dirname(source.configFile)) === resolve(mirror.relativeTo) ? null : source.configFile;
}

/**
 * A relative SQLite path that names no file: most likely a command run from another directory
 * than the one the mirror was made in. "Run wsmirror sync to create it" would make a second,
 * empty mirror there, so the message says where the path was resolved, and where it was set.
 */
function missingRelativeFile(mirror: Extract<MirrorConfig, { dialect: 'sqlite' }>, configFile: string, file: string): string {
  const setIn = describeSettingSource(mirror.urlSource);
  const notThere = ', not against the configuration file\'s directory';
  const configured = parseMirrorUrl(mirror.url);
  const beside = configured.dialect !== 'sqlite' ? undefined : resolve(dirname(configFile), configured.path);
  const found = beside !== undefined && beside !== file && existsSync(beside) ? `; a file of that name is beside the configuration file: ${beside}` : '';
  const absolute = found === '' ? `sqlite:/…/${file.slice(file.lastIndexOf('/') + 1)}` : `sqlite:${beside}`;
  return `the SQLite mirror ${mirror.url} does not exist: mirror.url (${setIn}) is a relative path, resolved against the working directory `
    + `${mirror.relativeTo}${notThere}, so it names ${file}, and there is no such file${found}. Run wsmirror from the directory that holds the `
    + `mirror, or set mirror.url to the mirror's absolute path (${absolute}); wsmirror sync run in ${mirror.relativeTo} would make a new, empty `
    + `mirror at ${file}`;
}
