import { ConfigError } from '../errors.ts';

export type MirrorLocation =
  | { dialect: 'sqlite'; path: string; display: string }
  | { dialect: 'postgres'; connectionString: string; display: string };

/** The URL with any password replaced by `***`, safe for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password !== '') {
      u.password = '***';
      return u.toString();
    }
    return url;
  } catch {
    // Not parseable: mask whatever sits between `user:` and `@`.
    return url.replace(/(\/\/[^/:@]*:)[^@/]*@/, '$1***@');
  }
}

/** Parses `sqlite:PATH`, `sqlite://PATH`, `postgres://…` or `postgresql://…`. */
export function parseMirrorUrl(url: string): MirrorLocation {
  const display = redactUrl(url);
  if (url.startsWith('sqlite:')) {
    let path = url.slice('sqlite:'.length);
    if (path.startsWith('//')) path = path.slice(2);
    if (path === '') throw new ConfigError(`mirror URL ${display}: the SQLite file path is empty (expected sqlite:PATH)`);
    return { dialect: 'sqlite', path, display };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    try {
      new URL(url);
    } catch {
      throw new ConfigError(`mirror URL ${display} is not a valid postgres:// URL`);
    }
    return { dialect: 'postgres', connectionString: url, display };
  }
  throw new ConfigError(`mirror URL ${display} is not supported: expected sqlite:PATH or postgres://USER@HOST:PORT/DATABASE`);
}
