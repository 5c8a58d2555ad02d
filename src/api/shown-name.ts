/**
 * Upstream names as messages show them. A name the API's rule allows has at most 100 characters;
 * one outside it may have thousands, and is repeated in every log line, `/readyz` and `status`:
 * its first 100 characters are shown, and its length.
 */
const SHOWN_CHARS = 100;

/** `name`, or its first 100 characters then `…(N characters)`. */
export function shownName(name: string): string {
  return name.length <= SHOWN_CHARS ? name : `${name.slice(0, SHOWN_CHARS)}…(${name.length} characters)`;
}

/** `"name"` as JSON quotes it, or `"first 100 characters"…(N characters)`. */
export function quotedName(name: string): string {
  return name.length <= SHOWN_CHARS ? JSON.stringify(name) : `${JSON.stringify(name.slice(0, SHOWN_CHARS))}…(${name.length} characters)`;
}
