import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import { settleUnreadBody } from './http/unread-body.ts';

/** Fault injection for the API routes, set through `PUT /_emulator/faults`. */
export const faultSettingsSchema = z.strictObject({
  /** Added to every API response. */
  latencyMs: z.number().int().min(0).max(60_000).default(0),
  /** Uniform random extra latency on top of `latencyMs`. */
  latencyJitterMs: z.number().int().min(0).max(60_000).default(0),
  /** Share of API requests answered 500 before anything is changed. */
  errorRate: z.number().min(0).max(1).default(0),
  /** Share of API requests answered 429 with `Retry-After`. */
  rateLimitRate: z.number().min(0).max(1).default(0),
  retryAfterSeconds: z.number().int().min(0).max(3600).default(1),
  /** Share of API requests whose connection is dropped without an answer. */
  dropRate: z.number().min(0).max(1).default(0),
  /** Seed of the fault dice, for reproducible runs; random when absent. */
  seed: z.number().int().optional(),
});
export type FaultSettings = z.output<typeof faultSettingsSchema>;

const NO_FAULTS: FaultSettings = faultSettingsSchema.parse({});

/** mulberry32: a small seedable PRNG, so a fault sequence can be replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class FaultInjector {
  #settings: FaultSettings = NO_FAULTS;
  #random: () => number = Math.random;
  /** How many faults of each kind were injected since the last change of settings. */
  injected = { errors: 0, rateLimited: 0, dropped: 0 };

  get settings(): FaultSettings {
    return this.#settings;
  }

  set(settings: FaultSettings): void {
    this.#settings = settings;
    this.#random = settings.seed === undefined ? Math.random : seeded(settings.seed);
    this.injected = { errors: 0, rateLimited: 0, dropped: 0 };
  }

  reset(): void {
    this.set(NO_FAULTS);
  }

  /** Registers the hook that applies the faults to the `/api/v1` routes, after auth. */
  register(app: FastifyInstance): void {
    app.addHook('onRequest', async (request, reply) => {
      // The route the router matched, however its path was spelled.
      if (request.is404 || !request.routeOptions.url?.startsWith('/api/')) return;
      const s = this.#settings;
      const delay = s.latencyMs + (s.latencyJitterMs > 0 ? Math.floor(this.#random() * s.latencyJitterMs) : 0);
      // Unref'd: a server stopping does not wait out the latency of a request it has cut.
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay).unref());
      const dice = this.#random();
      if (dice < s.dropRate) {
        this.injected.dropped++;
        request.raw.socket.destroy();
        return reply.hijack();
      }
      const answering = dice < s.dropRate + s.errorRate + s.rateLimitRate;
      // Answered before the body is read, as a real server's fault would be: the body is read and
      // dropped first, so the answer reaches a client still sending.
      if (answering) await settleUnreadBody(request, reply);
      if (dice < s.dropRate + s.errorRate) {
        this.injected.errors++;
        return reply.code(500).send({ error: { message: 'injected fault: internal server error' } });
      }
      if (answering) {
        this.injected.rateLimited++;
        return reply
          .code(429)
          .header('retry-after', String(s.retryAfterSeconds))
          .send({ error: { message: 'injected fault: too many requests' } });
      }
    });
  }
}
