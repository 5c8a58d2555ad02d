import type { FastifyInstance } from 'fastify';
import type { EmulatorContext } from '../context.ts';

export function registerFieldRoutes(_app: FastifyInstance, _ctx: EmulatorContext): void {
  // Routes of this group are registered here.
}
