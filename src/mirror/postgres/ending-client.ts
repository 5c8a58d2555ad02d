import pg from 'pg';

/**
 * pg's Client, ended when its connect fails. pg leaves the socket open when a connect fails on
 * the client's side (the password function found none, connection-config.ts): the server would
 * hold that session, and the process with it, until its `authentication_timeout` (a minute by
 * default), and `wsmirror status` would wait that long to say why. pg-pool drops such a client
 * without ending it, so the mirror's pool is given this class (pg-pool's `Client` option).
 * `end()` sends the server a Terminate message and closes the socket; the error goes on at once.
 */
export class ClientEndedWhenConnectFails extends pg.Client {
  override connect(): Promise<pg.Client>;
  override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
  override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
    const connected = (super.connect() as Promise<unknown>).then(() => this, (error: unknown) => {
      this.end().catch(() => {});
      throw error;
    });
    if (callback === undefined) return connected;
    const done = callback as (err: unknown, c?: pg.Client) => void;
    connected.then((client) => done(null, client), (error: unknown) => done(error));
  }
}
