/**
 * Where the operations endpoints (http-server.ts) listen unless configured: local only,
 * Prometheus's port range. Apart from the server so that reading the configuration does not load
 * node:http (whose module facade pulls in Node's own fetch and WebSocket code).
 */
export const HTTP_DEFAULTS = { host: '127.0.0.1', port: 9464 } as const;
