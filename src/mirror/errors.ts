import { WsmirrorError } from '../errors.ts';

/**
 * A mirror operation cannot be carried out: an unknown table, a stale schema plan, a value that
 * does not fit its field type. Connection and URL problems are `ConfigError` instead.
 */
export class MirrorError extends WsmirrorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MIRROR', message, options);
  }
}

/** A value does not have the shape its field type requires (either direction). */
export class MirrorValueError extends WsmirrorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MIRROR_VALUE', message, options);
  }
}
