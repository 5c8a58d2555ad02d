/**
 * The mirror of a validated configuration. Every command opens it here, so `status`, `outbox`
 * and a sync always open the same database (and, on Postgres, the same schema).
 */
import type { Mirror } from '../mirror/mirror.ts';
import { openMirror } from '../mirror/open-mirror.ts';
import type { Config, LocalConfig } from './config-types.ts';
import type { Logger } from './logger.ts';

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

export function openConfiguredMirror(config: Pick<Config | LocalConfig, 'mirror'>, options: OpenConfiguredMirrorOptions): Promise<Mirror> {
  return openMirror(mirrorUrlOf(config), {
    pgSchema: config.mirror.pgSchema,
    logger: options.logger,
    ...(options.mustExist === true ? { mustExist: true } : {}),
    ...(options.migrate === true ? { migrate: true } : {}),
    ...(options.syncLock === true ? { syncLock: true } : {}),
  });
}
