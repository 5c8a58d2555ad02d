/**
 * The upstream base URL rule: http or https, no query or fragment, and without `/api/v1` (the
 * client adds the API's paths itself; a URL ending in it would ask for `/api/v1/api/v1/…`).
 * The configuration checks `upstream.baseUrl` with this same rule.
 */
import { unparsedUrlForMessages, urlForMessages } from '../api/secret-redaction.ts';

export const BASE_URL_RULE = 'an http:// or https:// URL without query or fragment, such as https://db.example.com';

/** `scheme://` in front: without it, `localhost:8787` would read as a URL of scheme `localhost`. */
const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The URL normalised (no trailing slash), or why it is refused. */
export function checkBaseUrl(value: unknown): { url: string } | { problem: string } {
  if (typeof value !== 'string') return { problem: `is not ${BASE_URL_RULE}` };
  if (!SCHEME.test(value.trim())) {
    // Not the rule's example URL before the hint: text redaction would read `example.com: … @` as a password.
    return { problem: `is not an http:// or https:// URL: add http:// or https:// in front (http://${unparsedUrlForMessages(value.trim(), { keepUser: false })})` };
  }
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return { problem: `is not ${BASE_URL_RULE}` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: `is not ${BASE_URL_RULE}` };
  if (url.search !== '' || url.hash !== '') return { problem: `is not ${BASE_URL_RULE}` };
  if (/\/api\/v1\/?$/.test(url.pathname)) return { problem: 'ends in /api/v1: give the base URL only, wsmirror adds the path' };
  return { url: url.href.replace(/\/+$/, '') };
}

/**
 * A base URL (the configured value, or the checked one) as messages and logs show it: rebuilt
 * from its parts with any credentials (a user, a password, a token as the user) as [Redacted],
 * which the client never sends anyway (it asks the URL's origin); a value that is no URL with
 * everything after its user part hidden.
 */
export function displayBaseUrl(value: string): string {
  if (!SCHEME.test(value.trim())) return unparsedUrlForMessages(value.trim(), { keepUser: false });
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return unparsedUrlForMessages(value.trim(), { keepUser: false });
  }
  const shown = urlForMessages(url);
  return url.search === '' ? shown.replace(/\/+$/, '') : shown;
}
