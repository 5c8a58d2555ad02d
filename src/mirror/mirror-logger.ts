/** What the mirror logs through: a pino-compatible subset, so the daemon's logger fits as it is. */
export interface MirrorLogger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}
