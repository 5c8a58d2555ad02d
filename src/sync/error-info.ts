/** An error as a cycle reports and records it: its stable code (`ERROR` when it has none) and its message. */
export function errorInfo(error: unknown): { code: string; message: string } {
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'ERROR';
  return { code, message: error instanceof Error ? error.message : String(error) };
}
