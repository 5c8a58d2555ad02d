/**
 * The daemon's logger: pino JSON lines on stdout, or on a terminal (`log.format`) the same lines
 * made readable by pino-pretty, loaded only then. Redaction is done on each finished line rather
 * than through pino's `redact` paths, because secrets turn up where no path can name them: inside
 * error messages and stacks, in serialised request objects, in child bindings, at any depth.
 */
import { createRequire } from 'node:module';
import { pino } from 'pino';
import type { DestinationStream, Logger as PinoLogger } from 'pino';
import { REDACTED, createRedactor } from '../api/secret-redaction.ts';
import { writeHumanLine } from './terminal.ts';

export type Logger = PinoLogger;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

export interface LoggerOptions {
  /** Default `info`. */
  level?: LogLevel;
  /** Values hidden wherever they appear in a line: pass the API key. */
  secrets?: readonly (string | null | undefined)[];
  /** Where lines go; default stdout, written synchronously so nothing is lost at exit. */
  destination?: DestinationStream;
  /** Fields on every line. */
  bindings?: Record<string, unknown>;
  /** Readable lines for a person (pino-pretty) instead of JSON. */
  pretty?: boolean;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const inner = options.destination ?? pino.destination({ dest: 1, sync: true });
  const redact = createLogRedactor(options.secrets ?? []);
  const prettify = options.pretty === true ? prettyPrinter() : undefined;
  const stream: DestinationStream & { flush?: (cb?: (err?: Error) => void) => void } = {
    write(line: string) {
      if (prettify) writeHumanLine(inner, prettify(redact(line)));
      else inner.write(redact(line));
    },
  };
  const flushable = inner as { flush?: (cb?: (err?: Error) => void) => void };
  if (typeof flushable.flush === 'function') stream.flush = (cb) => flushable.flush?.(cb);
  return pino(
    {
      level: options.level ?? DEFAULT_LOG_LEVEL,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeErr },
      ...(options.bindings ? { base: { pid: process.pid, ...options.bindings } } : {}),
    },
    stream,
  );
}

/**
 * An Error as pino serialises it (its class, message, stack and own fields); what is no Error as
 * given: a failure logged as its `{ code, message }` would otherwise get pino's `"type":"Object"`
 * and an empty stack.
 */
function serializeErr(value: unknown): unknown {
  return value instanceof Error ? pino.stdSerializers.err(value) : value;
}

/** pino-pretty's formatter, required only here: JSON runs never load it. */
function prettyPrinter(): (line: string) => string {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof import('pino-pretty');
  return prettyFactory({ colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname', singleLine: true });
}

// Keys whose values are secrets wherever they sit in a logged object.
const SECRET_KEY = /^(?:api[-_]?key|authorization|proxy-authorization|x-api-key)$/i;
const SECRET_KEY_IN_JSON = /"(?:api[-_]?key|authorization|proxy-authorization|x-api-key)"\s*:/i;

/**
 * Returns a function that hides, in a JSON log line (or any text), what `createRedactor` of
 * `src/api/secret-redaction.ts` hides, and the values of `apiKey`/`authorization` keys.
 */
export function createLogRedactor(secrets: readonly (string | null | undefined)[]): (line: string) => string {
  const redact = createRedactor(secrets);
  return (line) => {
    const out = redact(line);
    return SECRET_KEY_IN_JSON.test(out) ? redactKeys(out) : out;
  };
}

function redactKeys(line: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return line; // not a JSON line: the textual rules above are all we can apply
  }
  const walk = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(walk);
    if (typeof value !== 'object' || value === null) return value;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? REDACTED : walk(item);
    return out;
  };
  return JSON.stringify(walk(parsed)) + (line.endsWith('\n') ? '\n' : '');
}
