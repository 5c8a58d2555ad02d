import * as z from 'zod';
import type { EndpointName, HttpMethod } from '../api/endpoints.ts';
import { workspaceIdSchema } from '../api/identifiers.ts';
import { describeIssues } from '../api/issues.ts';
import { ConfigError } from '../errors.ts';
import { API_KEY_RULE, checkApiKey } from './api-key.ts';
import { checkBaseUrl } from './base-url.ts';

/** One attempt of one request, reported to `onRequest` (the daemon turns it into metrics). */
export interface RequestInfo {
  endpoint: EndpointName;
  method: HttpMethod;
  /** HTTP status, or `network` when no complete response arrived (refused, reset, timeout). */
  status: number | 'network';
  durationMs: number;
  /** 1 for the first attempt, 2 for the first retry… */
  attempt: number;
  /** Whether the client will try again after this attempt. */
  willRetry: boolean;
}

/** The subset of a pino logger the client uses; a pino logger fits. */
export interface ClientLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Options left out take the values of CLIENT_DEFAULTS below (said once, there). */
export interface WorkspaceClientOptions {
  /** Upstream base URL without `/api/v1`, e.g. `https://db.example.com`. */
  baseUrl: string;
  /** Bearer key; never logged, never part of an error. */
  apiKey: string;
  /** The 12-character workspace id. */
  workspaceId: string;
  /** Limit for one attempt: connect, headers and the whole body. */
  timeoutMs?: number;
  /** Retries after the first attempt. */
  maxRetries?: number;
  /** Backoff base and ceiling (full jitter). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** A `Retry-After` longer than this is not waited out: the call fails with the delay attached. */
  retryAfterMaxMs?: number;
  /** Requests in flight at once (also the connection pool size). */
  concurrency?: number;
  /** Largest accepted response body. */
  maxResponseBytes?: number;
  onRequest?: (info: RequestInfo) => void;
  logger?: ClientLogger;
}

/** The defaults, here and only here: the configuration's `upstream` section takes them from this. */
export const CLIENT_DEFAULTS = {
  timeoutMs: 30_000,
  maxRetries: 6,
  retryBaseMs: 250,
  retryMaxMs: 30_000,
  retryAfterMaxMs: 120_000,
  concurrency: 4,
  // A page is held as text and parsed while others are in flight: 32 MiB keeps a few of them
  // inside the service's heap bound (bin/wsmirror); 60 MiB pages ran it out of memory.
  maxResponseBytes: 32 * 1024 * 1024,
} as const;

/** Accepted ranges (inclusive), also the configuration's. */
export const CLIENT_LIMITS = {
  maxRetries: { min: 0, max: 100 },
  concurrency: { min: 1, max: 64 },
  /** A smaller limit could not hold an error body. */
  maxResponseBytes: { min: 1024 },
} as const;

export interface ResolvedClientOptions {
  origin: string;
  /** Path of the base URL (no trailing slash), put before every endpoint path. */
  pathPrefix: string;
  apiKey: string;
  workspaceId: string;
  timeoutMs: number;
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  retryAfterMaxMs: number;
  concurrency: number;
  maxResponseBytes: number;
  onRequest: ((info: RequestInfo) => void) | undefined;
  logger: ClientLogger | undefined;
}

const positiveInt = z.number().int().positive();
const nonNegativeInt = z.number().int().min(0);

const optionsSchema = z.object({
  baseUrl: z.unknown().transform((value, ctx) => {
    const checked = checkBaseUrl(value);
    if ('problem' in checked) {
      ctx.addIssue({ code: 'custom', message: checked.problem });
      return z.NEVER;
    }
    return checked.url;
  }),
  apiKey: z.unknown().transform((value, ctx) => {
    const key = checkApiKey(value);
    if (key === undefined) {
      ctx.addIssue({ code: 'custom', message: API_KEY_RULE });
      return z.NEVER;
    }
    return key;
  }),
  workspaceId: workspaceIdSchema,
  timeoutMs: positiveInt,
  maxRetries: nonNegativeInt.min(CLIENT_LIMITS.maxRetries.min).max(CLIENT_LIMITS.maxRetries.max),
  retryBaseMs: nonNegativeInt,
  retryMaxMs: nonNegativeInt,
  retryAfterMaxMs: nonNegativeInt,
  concurrency: positiveInt.min(CLIENT_LIMITS.concurrency.min).max(CLIENT_LIMITS.concurrency.max),
  maxResponseBytes: positiveInt.min(CLIENT_LIMITS.maxResponseBytes.min),
});

/** Fills defaults and checks every option, naming the one at fault. */
export function resolveClientOptions(options: WorkspaceClientOptions): ResolvedClientOptions {
  const merged = {
    ...CLIENT_DEFAULTS,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  } as WorkspaceClientOptions & typeof CLIENT_DEFAULTS;
  const parsed = optionsSchema.safeParse(merged);
  if (!parsed.success) throw new ConfigError(`invalid client options: ${describeIssues(parsed.error.issues)}`);
  const url = new URL(parsed.data.baseUrl);
  return {
    ...parsed.data,
    origin: url.origin,
    pathPrefix: url.pathname.replace(/\/+$/, ''),
    onRequest: options.onRequest,
    logger: options.logger,
  };
}
