// Types of the two undici files that src/client/undici-pool.ts imports instead of the entry module.
declare module 'undici/lib/dispatcher/pool.js' {
  const Pool: typeof import('undici').Pool;
  export default Pool;
}
declare module 'undici/lib/api/api-request.js' {
  const request: (
    this: import('undici').Dispatcher,
    options: import('undici').Dispatcher.RequestOptions,
  ) => Promise<import('undici').Dispatcher.ResponseData>;
  export default request;
}
