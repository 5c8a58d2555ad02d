import { errorBodySchema } from '../api/common.ts';
import { REDACTED, type Redactor } from '../api/secret-redaction.ts';

/**
 * A response body as error messages show it: the API's own error message, or an excerpt of the
 * body's start with secrets hidden, or, for a body that is no text, what it is. Never more than
 * its start is read for it.
 */

/** Only the start of an error body is read: enough for `{ error: { message } }`. */
export const ERROR_BODY_LIMIT = 16 * 1024;
const EXCERPT_CHARS = 200;

/**
 * The start of a body as messages show it: whitespace runs as one space, secrets hidden, cut at
 * EXCERPT_CHARS. Hidden before the cut, so that the cut cannot split a secret and leave its start
 * shown; `whole`: false when `start` is only what was read of a longer body.
 */
function excerpt(start: string, whole: boolean, redact: Redactor): string {
  const text = start.replace(/\s+/g, ' ').trim();
  const shown = whole ? redact(text) : redact.start(text);
  if (shown.length <= EXCERPT_CHARS) return shown;
  // Nor half a placeholder.
  const placeholder = shown.lastIndexOf(REDACTED, EXCERPT_CHARS - 1);
  const end = placeholder >= 0 && placeholder + REDACTED.length > EXCERPT_CHARS ? placeholder + REDACTED.length : EXCERPT_CHARS;
  return end >= shown.length ? shown : `${shown.slice(0, end)}…`;
}

/** `error.message` of a spec error body, or a short excerpt of any other body (`bytes`: what was read of it). */
export function errorMessage(bytes: Buffer, headers: BodyHeaders, redact: Redactor): string {
  try {
    const parsed = errorBodySchema.safeParse(JSON.parse(bytes.toString('utf8')));
    if (parsed.success) return parsed.data.error.message;
  } catch {
    // Not JSON: a proxy's HTML page, say.
  }
  const size = bytes.length < ERROR_BODY_LIMIT ? bytes.length : Number(headers['content-length'] ?? bytes.length);
  return bodyExcerpt(bytes, Number.isSafeInteger(size) ? size : bytes.length, headers, redact);
}

/** The response headers that describe a body. */
export type BodyHeaders = Record<string, string | string[] | undefined>;

const BINARY = 'a binary body';
// C0 controls but tab, line feed, carriage return (and form feed, vertical tab: whitespace), and DEL.
const CONTROL = /[\u0000-\u0008\u000E-\u001F\u007F]/;

/** Text holding control characters is no text a message can show (a compressed body that happens to be UTF-8). */
function isBinary(text: string): boolean {
  return CONTROL.test(text);
}

/** `a binary body of N bytes (content-encoding gzip, content-type application/json)`: what shows of one, none of its bytes. */
function describeBinary(size: number, headers: BodyHeaders): string {
  const described = ['content-encoding', 'content-type'].flatMap((name) => {
    const value = headers[name];
    return value === undefined ? [] : [`${name} ${printable(Array.isArray(value) ? value.join(', ') : value)}`];
  });
  return `${BINARY} of ${size} bytes${described.length === 0 ? '' : ` (${described.join(', ')})`}`;
}

/** A header's value as a message may show it: printable ASCII, at most 100 characters. */
function printable(value: string): string {
  const clean = value.replace(/[^\x20-\x7E]/g, '?');
  return clean.length > 100 ? `${clean.slice(0, 100)}…` : clean;
}

/**
 * The start of a body (`bytes`, of `size` in all) as messages show it: an excerpt of its text, or,
 * when it is not text (not UTF-8, or holding control characters: a gzip body, say), what it is.
 */
export function bodyExcerpt(bytes: Buffer, size: number, headers: BodyHeaders, redact: Redactor): string {
  const whole = bytes.length >= size;
  let text: string;
  try {
    // A cut may split the last character: only a whole body must end as UTF-8 does.
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: !whole });
  } catch {
    return describeBinary(size, headers);
  }
  return textExcerpt(text, whole, size, headers, redact);
}

/** Text of a body (`whole`, or its start), of `size` bytes in all, as messages show it. */
export function textExcerpt(text: string, whole: boolean, size: number, headers: BodyHeaders, redact: Redactor): string {
  return isBinary(text) ? describeBinary(size, headers) : excerpt(text, whole, redact);
}

/** Whether `shown` (from the functions above) describes a body rather than quoting it. */
export function isBinaryDescription(shown: string): boolean {
  return shown.startsWith(BINARY);
}
