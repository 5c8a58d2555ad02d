import Fastify, { type FastifyInstance } from 'fastify';
import { RECORDS_PAYLOAD_LIMIT_BYTES, workspaceIdSchema } from '../api/index.ts';
import { Clock } from './clock.ts';
import type { EmulatorContext } from './context.ts';
import { FaultInjector } from './faults.ts';
import { Authenticator, registerAuth } from './http/auth.ts';
import { registerBodyParsers } from './http/body-parsers.ts';
import { registerClosingConnections } from './http/closing.ts';
import { answerClientError, frameworkErrorHandler, registerErrorHandling } from './http/error-handler.ts';
import { DEFAULT_WORKSPACE_ID, type EmulatorOptions } from './options.ts';
import { registerAdminRoutes } from './routes/admin.ts';
import { registerCsvImportRoute } from './routes/csv-import.ts';
import { registerFieldRoutes } from './routes/fields.ts';
import { registerOpenApiRoute } from './routes/openapi.ts';
import { registerRecordChangeRoutes } from './routes/record-changes.ts';
import { registerRecordRoutes } from './routes/records.ts';
import { registerTableRoutes } from './routes/tables.ts';
import { registerWorkspaceRoutes } from './routes/workspace.ts';
import { ChangeLog } from './store/change-log.ts';
import { openDatabase } from './store/database.ts';
import { SchemaLookup } from './store/schema-rows.ts';
import { StoreGate } from './store/store-gate.ts';
import { initializeWorkspace } from './workspace-state.ts';

declare module 'fastify' {
  interface FastifyInstance {
    emulator: EmulatorContext;
  }
}

/** Builds the emulator's HTTP server without listening (tests and `listen()` share it). */
export async function buildServer(options: EmulatorOptions = {}): Promise<FastifyInstance> {
  const workspaceId = options.workspaceId ?? DEFAULT_WORKSPACE_ID;
  const idCheck = workspaceIdSchema.safeParse(workspaceId);
  if (!idCheck.success) throw new Error(`invalid workspace id ${JSON.stringify(workspaceId)}: ${idCheck.error.issues[0]?.message}`);

  const db = openDatabase(options.dataFile);
  const clock = new Clock();
  const ctx: EmulatorContext = {
    db,
    clock,
    changes: new ChangeLog(db, clock),
    schema: new SchemaLookup(db),
    faults: new FaultInjector(),
    gate: new StoreGate(),
    workspaceId,
    options,
  };
  try {
    initializeWorkspace(ctx);
  } catch (error) {
    db.close();
    throw error;
  }

  const auth = new Authenticator(options);
  const app = Fastify({
    logger: options.logRequests ? { level: 'info', redact: ['req.headers.authorization'] } : false,
    bodyLimit: RECORDS_PAYLOAD_LIMIT_BYTES,
    // `__proto__` and `constructor` are valid module, table and field names: JSON bodies keep
    // them as ordinary keys (JSON.parse makes own properties), and the store never uses a name
    // as a key of a plain object.
    onProtoPoisoning: 'ignore',
    onConstructorPoisoning: 'ignore',
    frameworkErrors: frameworkErrorHandler(auth),
    clientErrorHandler: answerClientError,
    // Never reject a request for its query string shape before our own validation sees it; path
    // parameters up to 1000 characters reach it too (an over-long name is a 400, not a 414).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
  });
  app.decorate('emulator', ctx);
  app.addHook('onClose', async () => db.close());
  registerClosingConnections(app);
  registerErrorHandling(app);
  registerBodyParsers(app);
  registerAuth(app, auth);
  ctx.faults.register(app);
  // The last step before a handler: a request waits here while a CSV import holds the store.
  app.addHook('preHandler', (_request, _reply, done) => ctx.gate.onFree(done));

  registerOpenApiRoute(app);
  registerWorkspaceRoutes(app, ctx);
  registerTableRoutes(app, ctx);
  registerFieldRoutes(app, ctx);
  registerRecordRoutes(app, ctx);
  registerRecordChangeRoutes(app, ctx);
  registerCsvImportRoute(app, ctx);
  registerAdminRoutes(app, ctx);
  return app;
}

/** Listens and returns the base URL, e.g. `http://127.0.0.1:8787`. */
export async function listen(app: FastifyInstance, where: { host?: string; port?: number } = {}): Promise<string> {
  const host = where.host ?? '127.0.0.1';
  await app.listen({ host, port: where.port ?? 8787 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : where.port;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return `http://${shownHost}:${port}`;
}
