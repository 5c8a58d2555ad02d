export const REDACTED = '[REDACTED]';

/**
 * Returns a function that blanks out the API key wherever it occurs. Every text the client puts
 * into an error or a log line goes through it: an upstream (or a proxy) may echo request headers
 * back in an error body.
 */
export function secretRedactor(secret: string): (text: string) => string {
  return (text) => (secret === '' ? text : text.split(secret).join(REDACTED));
}
