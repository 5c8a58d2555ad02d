import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a Postgres server that trusts its clients (the test server), which
 * asks each client for a password first, as a server with `password` authentication does: it
 * answers the startup message with AuthenticationCleartextPassword, keeps the password the
 * client sends, then hands the client's startup message to the server and relays both ways.
 */
export interface PasswordProxy {
  /** `url` with the proxy's host and port. */
  url: string;
  /** The passwords clients sent, in order. */
  readonly passwords: string[];
  /** Client connections open now: asking for a password, or relayed. */
  openClients(): number;
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const CLEARTEXT_PASSWORD = Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3]);

export async function startPasswordProxy(url: string): Promise<PasswordProxy> {
  const target = new URL(url);
  const sockets = new Set<Socket>();
  const clients = new Set<Socket>();
  const passwords: string[] = [];
  const server: Server = createServer((client) => {
    sockets.add(client);
    clients.add(client);
    let pending = Buffer.alloc(0);
    let startup: Buffer | undefined;
    const onData = (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      if (startup === undefined) {
        if (pending.length < 8) return;
        const length = pending.readInt32BE(0);
        if (pending.length < length) return;
        const message = pending.subarray(0, length);
        pending = pending.subarray(length);
        // No TLS here: the client goes on in clear, as with a server without ssl.
        if (length === 8 && message.readInt32BE(4) === SSL_REQUEST) return void client.write('N');
        startup = message;
        client.write(CLEARTEXT_PASSWORD);
        return;
      }
      if (pending.length < 5) return;
      const length = pending.readInt32BE(1) + 1;
      if (pending.length < length) return;
      // A PasswordMessage ('p'); a client with no password to give ends the session instead (Terminate, 'X').
      if (pending[0] === 0x70) passwords.push(pending.subarray(5, length - 1).toString('utf8'));
      const rest = pending.subarray(length);
      client.off('data', onData);
      const upstream = connect(Number(target.port || 5432), target.hostname);
      sockets.add(upstream);
      upstream.write(startup);
      if (rest.length > 0) upstream.write(rest);
      client.pipe(upstream);
      upstream.pipe(client);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      upstream.on('close', end).on('error', end);
    };
    client.on('data', onData);
    client.on('error', () => client.destroy());
    client.on('close', () => {
      sockets.delete(client);
      clients.delete(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  return {
    url: proxied.toString(),
    passwords,
    openClients: () => clients.size,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
