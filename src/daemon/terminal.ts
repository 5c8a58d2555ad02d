/**
 * The terminal a person watches. On it, wsmirror draws progress bars and pretty log lines; off it
 * (a pipe, journald, Docker), JSON lines. While bars are drawn, a log line is printed above them
 * rather than through them: the bars register here, the pretty logger writes through here.
 */

export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

interface TtyLike {
  isTTY?: boolean;
}

/** `auto` is pretty on a terminal and JSON elsewhere. */
export function isHuman(format: LogFormat, stream: TtyLike): boolean {
  return format === 'pretty' || (format === 'auto' && stream.isTTY === true);
}

interface LinePrinter {
  log(text: string): void;
}

let bars: LinePrinter | undefined;

/** Called by the progress bars while they are drawn (undefined once they are gone). */
export function printLogsAbove(printer: LinePrinter | undefined): void {
  bars = printer;
}

/** Writes a finished human line: above the bars when there are some, else to `stream`. */
export function writeHumanLine(stream: { write(text: string): unknown }, text: string): void {
  if (bars) bars.log(text);
  else stream.write(text);
}
