/**
 * Durations (`30s`, `10m`, `1h30m`, `250ms`) and sizes (`64MB`) as written in the configuration
 * file and environment, and their human rendering for logs and progress lines.
 */

const DURATION_UNITS_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const DURATION_PATTERN = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const PLAIN_NUMBER = /^\d+(?:\.\d+)?$/;

/**
 * Parses a duration into whole milliseconds. A bare number counts as seconds (as in systemd), so
 * `timeout: 30` and `WSMIRROR_UPSTREAM_TIMEOUT=30` both mean 30 s. Returns undefined when the
 * value is not a duration.
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isFinite(value) && value >= 0 ? Math.round(value * 1_000) : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase().replaceAll(' ', '');
  if (PLAIN_NUMBER.test(text)) return Math.round(Number(text) * 1_000);
  if (!DURATION_PATTERN.test(text)) return undefined;
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) {
    ms += Number(amount) * (DURATION_UNITS_MS[unit ?? ''] ?? Number.NaN);
  }
  return Number.isFinite(ms) ? Math.round(ms) : undefined;
}

/** True when the text reads as a duration (used to tell intervals from cron expressions). */
export function looksLikeDuration(value: string): boolean {
  return parseDuration(value) !== undefined;
}

// Binary multiples: "64MB" is 64 × 1024 × 1024 bytes, the way most tools read it.
const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  kb: 1024,
  kib: 1024,
  k: 1024,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  m: 1024 ** 2,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  g: 1024 ** 3,
};

const SIZE_PATTERN = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/;

/** Parses a size into whole bytes: a bare number is bytes; KB, MB, GB are powers of 1024. */
export function parseSize(value: unknown): number | undefined {
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  }
  if (typeof value !== 'string') return undefined;
  const match = SIZE_PATTERN.exec(value.trim().toLowerCase());
  if (!match) return undefined;
  const factor = SIZE_UNITS[match[2] ?? ''];
  if (factor === undefined) return undefined;
  const bytes = Math.round(Number(match[1]) * factor);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** Renders milliseconds as `850ms`, `42s`, `3m 05s`, `2h 10m`, `3d 4h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  const seconds = Math.round(ms / 1_000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m ${String(seconds % 60).padStart(2, '0')}s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours}h ${String(minutes % 60).padStart(2, '0')}m`;
  return `${Math.floor(hours / 24)}d ${hours % 24}h`;
}

/** Renders a byte count as `512B`, `64MB`, `1.5GB` (powers of 1024, as parseSize reads them). */
export function formatSize(bytes: number): string {
  for (const [unit, factor] of [['GB', 1024 ** 3], ['MB', 1024 ** 2], ['KB', 1024]] as const) {
    if (bytes >= factor) {
      const amount = bytes / factor;
      return `${Number.isInteger(amount) ? amount : amount.toFixed(1)}${unit}`;
    }
  }
  return `${bytes}B`;
}

/**
 * A whole number with thousands separators, `12,345`, as toLocaleString('en-US') writes it but
 * without the set-up of its first call (tens of milliseconds, a large part of a short sync).
 */
export function formatCount(n: number): string {
  return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
