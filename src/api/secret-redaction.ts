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

/**
 * Returns a function that hides, in any text: the given secret values (also as they read inside
 * a JSON string), `Bearer …` tokens, and passwords in URLs (after the user, or as a parameter).
 */
export function createRedactor(secrets: readonly (string | null | undefined)[] = []): (text: string) => string {
  const needles = new Set<string>();
  for (const secret of secrets) {
    const value = typeof secret === 'string' ? secret.trim() : '';
    if (value.length < MIN_SECRET_LENGTH) continue;
    needles.add(value);
    needles.add(JSON.stringify(value).slice(1, -1)); // as it reads inside a JSON string
  }
  return (text) => {
    let out = text;
    for (const needle of needles) if (out.includes(needle)) out = out.split(needle).join(REDACTED);
    return out.replace(BEARER, `$1${REDACTED}`).replace(URL_PASSWORD, `$1${REDACTED}@`).replace(PARAMETER, hideParameter);
  };
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

function hideParameter(match: string, name: string, equals: string): string {
  return isPasswordParameter(name) ? `${name}${equals}${REDACTED}` : match;
}

const noSecrets = createRedactor();

/** `postgres://user:secret@host/db` → `postgres://user:[Redacted]@host/db`. */
export function redactUrlPasswords(text: string): string {
  return noSecrets(text);
}
