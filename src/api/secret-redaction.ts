/**
 * The one way wsmirror hides secrets in text it shows: log lines, error messages, `/readyz`
 * bodies, configuration dumps, mirror URLs. Kept in the shared contract folder because every side
 * (client, mirror, daemon) needs the same rule and the same placeholder.
 */

/** What a hidden secret reads as, everywhere. */
export const REDACTED = '[Redacted]';

const BEARER = /\b(Bearer\s+)[^\s"\\,;]+/gi;
// `scheme://user:password@host` — the password is whatever lies between the user's colon and
// the last `@` that follows it: a password that was not percent-encoded may hold `@`, `/`,
// spaces, `#`, `?`, `"`, `\`. Where the URL ends cannot be known in a message, so the last `@` is
// looked for up to the end of the line or of the quoted string the URL is in (a quote escaped
// with a backslash, as in JSON, does not end it; a bare `"` does not either when an `@` follows
// it before any space): a log line stays JSON, and text after the URL that holds an `@` of its
// own (a mail address) is hidden too rather than a password shown. A user name may hold an
// unencoded `@` too (`user@server`), or a `"`. A backslash just before an `@` is the password's
// last character (plain text), not an escape of the `@`.
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/(?:[^\s:/"\\]|\\[^\r\n]|"(?=[^\s"/]*:))*:)(?:[^"\\\r\n]|\\[^@\r\n]|\\(?=@)|"(?=[^\s"]*@))*@/gi;
// A parameter `name=value`, the name perhaps percent-encoded (`pass%77ord`): its value is hidden
// when the name is a password's (isPasswordParameter), in a URL's query (`?password=…`) or a
// libpq key/value string (`host=db password='…'`).
const PARAMETER = /(?<![\w%])((?:\w|%[0-9a-f]{2})+)(\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&'"]+)/gi;
// Shorter values would blank out ordinary words; keys are far longer.
const MIN_SECRET_LENGTH = 6;

/** Hides secrets in text: see `createRedactor`. */
export interface Redactor {
  (text: string): string;
  /**
   * The same for text that is only the start of a longer one (what was read of a body): a secret
   * that the cut left only the start of, at its end, is hidden too.
   */
  start(text: string): string;
}

/**
 * Returns a function that hides, in any text: the given secret values (also as they read inside
 * a JSON string), `Bearer …` tokens, and passwords in URLs (after the user, or as a parameter).
 * To show only the start of a text, hide first and cut after (a cut can split a secret, which
 * then no longer matches), and cut only where no secret is.
 */
export function createRedactor(secrets: readonly (string | null | undefined)[] = []): Redactor {
  const needles = new Set<string>();
  for (const secret of secrets) {
    const value = typeof secret === 'string' ? secret.trim() : '';
    if (value.length < MIN_SECRET_LENGTH) continue;
    needles.add(value);
    needles.add(JSON.stringify(value).slice(1, -1)); // as it reads inside a JSON string
  }
  const redact = (text: string): string => {
    let out = text;
    for (const needle of needles) if (out.includes(needle)) out = out.split(needle).join(REDACTED);
    return out.replace(BEARER, `$1${REDACTED}`).replace(URL_PASSWORD, `$1${REDACTED}@`).replace(PARAMETER, hideParameter);
  };
  return Object.assign(redact, {
    start: (text: string): string => {
      const out = redact(text);
      // Even one character: no part of a secret is shown.
      let cut = 0;
      for (const needle of needles) {
        for (let length = Math.min(needle.length - 1, out.length); length > cut; length--) {
          if (out.endsWith(needle.slice(0, length))) {
            cut = length;
            break;
          }
        }
      }
      return cut === 0 ? out : `${out.slice(0, out.length - cut)}${REDACTED}`;
    },
  });
}

/** True for the names of parameters that hold a password, as libpq and pg take them (`password`, `sslpassword`), percent-encoded or not. */
export function isPasswordParameter(name: string): boolean {
  let decoded = name;
  try {
    decoded = decodeURIComponent(name);
  } catch {
    // A stray `%`: the name as written.
  }
  return /^(?:ssl)?password$/i.test(decoded.trim());
}

/**
 * A parsed URL as messages show it, rebuilt from its parts rather than searched as text: its
 * password, and its user too unless `keepUser`, as [Redacted], and the value of a `password` or
 * `sslpassword` parameter of its query; no fragment. Whatever characters they hold, in whatever
 * encoding, none of them reaches a message. `host`: what stands for the host (libpq's hostless
 * form of a Postgres URL shows none).
 */
export function urlForMessages(url: URL, options: { keepUser?: boolean; host?: string } = {}): string {
  const credentials = options.keepUser === true ? `${url.username}${url.password === '' ? '' : `:${REDACTED}`}` : REDACTED;
  const userinfo = url.username === '' && url.password === '' ? '' : `${credentials}@`;
  const query = url.search === '' ? '' : `?${url.search.slice(1).split('&').map(hiddenParameter).join('&')}`;
  return `${url.protocol}//${userinfo}${options.host ?? url.host}${url.pathname}${query}`;
}

function hiddenParameter(parameter: string): string {
  const equals = parameter.indexOf('=');
  return equals >= 0 && isPasswordParameter(parameter.slice(0, equals)) ? `${parameter.slice(0, equals)}=${REDACTED}` : parameter;
}

/**
 * A value that is no URL, as a message may show it: everything after the first `:` that follows
 * the user part (after `scheme:/` or `scheme://`, else from the start) is hidden, since where a
 * password ends cannot be known in it (`postgres:/u:[Redacted]`, `u:[Redacted]`); a user part
 * without a colon is hidden up to its `@`. But a host and port with no `@` anywhere
 * (`127.0.0.1:8787`, `localhost:8787/base`, `[::1]:8787`) hold no user part, and a port is not a
 * password: such a value is shown as given, less any password parameter. Without `keepUser`
 * (a user there may be a token, as in a base URL), all before the last `@` is one [Redacted].
 */
export function unparsedUrlForMessages(value: string, options: { keepUser?: boolean } = {}): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/+/i.exec(value)?.[0].length ?? 0;
  const bracket = value[scheme] === '[' ? value.indexOf(']', scheme) : -1; // an IPv6 address's colons are its own
  const colon = value.indexOf(':', bracket < 0 ? scheme : bracket);
  const at = value.lastIndexOf('@');
  if (at >= scheme && (options.keepUser === false || colon < 0 || colon > at)) {
    return `${value.slice(0, scheme)}${REDACTED}${redactUrlPasswords(value.slice(at))}`;
  }
  if (colon < 0) return value;
  if (at < scheme && /^\d+(?:[/?#]|$)/.test(value.slice(colon + 1))) return redactUrlPasswords(value);
  return `${value.slice(0, colon + 1)}${REDACTED}`;
}

function hideParameter(match: string, name: string, equals: string): string {
  return isPasswordParameter(name) ? `${name}${equals}${REDACTED}` : match;
}

const noSecrets = createRedactor();

/** `postgres://user:secret@host/db` → `postgres://user:[Redacted]@host/db`. */
export function redactUrlPasswords(text: string): string {
  return noSecrets(text);
}
