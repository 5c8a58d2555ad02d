// Types of the pgpass package (the password file reader pg uses), which ships none.
declare module 'pgpass' {
  /** Calls back with the password of the first line of the file that matches, or undefined. */
  function pgPass(connection: { host?: string; port?: number | string; database?: string; user?: string }, callback: (password: string | undefined) => void): void;
  export default pgPass;
}
