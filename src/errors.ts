/**
 * The daemon's errors: a few classes, each with a stable `code` that scripts and tests can rely
 * on. The emulator has its own (it shares only `src/api/` with the daemon).
 */
export class WsmirrorError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A configuration file, key or value is wrong, or the mirror URL cannot be reached (exit 78). */
export class ConfigError extends WsmirrorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFIG_INVALID', message, options);
  }
}

/** The command line is wrong (exit 2). */
export class UsageError extends WsmirrorError {
  constructor(message: string) {
    super('USAGE', message);
  }
}

export const EXIT = { ok: 0, syncFailed: 1, usage: 2, config: 78 } as const;
