/**
 * Text from elsewhere (an upstream's message, a value typed by someone) as a terminal line shows
 * it and never obeys it: control characters (C0, DEL and C1, which carry colours, window titles
 * and cursor moves) escaped as in JSON, a line break too unless `keepLines`.
 */
const ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

export function printable(text: string, options: { keepLines?: boolean } = {}): string {
  const controls = options.keepLines ? /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g : /[\u0000-\u001f\u007f-\u009f]/g;
  return text.replace(controls, (c) => ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
