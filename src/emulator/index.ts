// The emulator's public entry: the only module of src/emulator/ that src/cli/ may import.
export { buildServer, listen } from './server.ts';
export { closeWithin } from './http/closing.ts';
export { ApiKeyFlagError, parseApiKeyFlag, DEFAULT_WORKSPACE_ID } from './options.ts';
export type { ApiKeyGrant, EmulatorOptions } from './options.ts';
