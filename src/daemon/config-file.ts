/**
 * Reading the files the configuration names (the YAML file, an API key file) with a bound: a
 * path to `/dev/zero` or a log file given by mistake must not fill the memory.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { ConfigError } from '../errors.ts';
import { formatSize } from './units.ts';

/** Far above any real configuration; a larger file is not one. */
const MAX_CONFIG_FILE_BYTES = 1024 ** 2;

export interface ConfigFileRead {
  /** The file as named, for messages. */
  label: string;
  /** Absolute path, or null when the default file is absent. */
  absolute: string | null;
  /** Its permission bits when it is a regular file (null when absent, or a pipe, say). */
  mode: number | null;
  raw: unknown;
  /** Unquoted values YAML read as a number or boolean, by their path: for messages about them. */
  unquoted: UnquotedValues;
}

/** Path (JSON of the key path, as zod reports it) → the value's text in the file and what YAML made of it. */
export type UnquotedValues = ReadonlyMap<string, { source: string; value: number | boolean }>;

/** Parses the YAML file; a missing default file (`explicit` false) reads as empty. */
export function readConfigFile(name: string, explicit: boolean, cwd: string): ConfigFileRead {
  const absolute = resolve(cwd, name);
  let read: BoundedRead;
  try {
    read = readBounded(absolute, MAX_CONFIG_FILE_BYTES);
  } catch (error) {
    if (!explicit && errorCode(error) === 'ENOENT') return { label: name, absolute: null, mode: null, raw: {}, unquoted: new Map() };
    throw new ConfigError(`${name}: cannot read the configuration file: ${describeFsError(error)}`, { cause: error });
  }
  if (read.tooLarge) throw new ConfigError(`${name}: the configuration file is larger than ${formatSize(MAX_CONFIG_FILE_BYTES)}`);
  // Loaded only when there is a file to parse: most runs configure through the environment, and
  // the parser is some seventy modules of start-up.
  const yaml = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const { LineCounter, parseDocument } = yaml;
  const lineCounter = new LineCounter();
  const doc = parseDocument(read.text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  // YAML errors carry no value text once prettyErrors is off; their position is enough.
  const problems = [...doc.errors, ...doc.warnings].map((problem) => {
    const { line, col } = lineCounter.linePos(problem.pos[0]);
    const message = problem.message.split('\n')[0] ?? problem.code;
    return `${name}: line ${line}, column ${col}: ${message}`;
  });
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  try {
    return { label: name, absolute, mode: read.regularFile ? read.mode : null, raw: doc.toJS(), unquoted: unquotedValues(yaml, doc.contents) };
  } catch (error) {
    throw new ConfigError(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * The plain (unquoted) scalars YAML resolved to a number or boolean: `workspaceId: 000000000001`
 * is the number 1 once parsed, and only the document still holds the text the user wrote.
 */
function unquotedValues(yaml: typeof import('yaml'), root: unknown): UnquotedValues {
  const found = new Map<string, { source: string; value: number | boolean }>();
  const walk = (node: unknown, path: (string | number)[]) => {
    if (yaml.isMap(node)) {
      for (const pair of node.items) {
        if (yaml.isScalar(pair.key) && (typeof pair.key.value === 'string' || typeof pair.key.value === 'number')) walk(pair.value, [...path, pair.key.value]);
      }
    } else if (yaml.isSeq(node)) {
      node.items.forEach((item, i) => walk(item, [...path, i]));
    } else if (yaml.isScalar(node) && node.type === 'PLAIN' && node.source !== undefined
      && (typeof node.value === 'number' || typeof node.value === 'boolean')) {
      found.set(JSON.stringify(path), { source: node.source, value: node.value });
    }
  };
  walk(root, []);
  return found;
}

export interface BoundedRead {
  /** The first `limit` bytes as UTF-8. */
  text: string;
  /** The file holds more than `limit` bytes (or never ends). */
  tooLarge: boolean;
  regularFile: boolean;
  /** Permission bits of the file opened (after symbolic links). */
  mode: number;
}

/** Reads at most `limit` bytes, plus one to tell whether there is more. */
export function readBounded(path: string, limit: number): BoundedRead {
  const fd = openSync(path, 'r');
  try {
    const stat = fstatSync(fd);
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    return {
      text: buffer.toString('utf8', 0, Math.min(length, limit)),
      tooLarge: length > limit,
      regularFile: stat.isFile(),
      mode: stat.mode,
    };
  } finally {
    closeSync(fd);
  }
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

export function describeFsError(error: unknown): string {
  switch (errorCode(error)) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
