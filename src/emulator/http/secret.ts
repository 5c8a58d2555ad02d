import { createHash, timingSafeEqual } from 'node:crypto';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * A bearer secret (admin token, API key) kept as its SHA-256 digest. Comparing digests, which
 * always have the same length, with `timingSafeEqual` takes the same time wherever a guess first
 * differs and whatever its length, so answer times tell nothing about the secret.
 */
export class Secret {
  readonly #digest: Buffer;

  constructor(value: string) {
    this.#digest = digest(value);
  }

  matches(candidate: string): boolean {
    return timingSafeEqual(this.#digest, digest(candidate));
  }
}
