/**
 * Progress on a terminal: one bar per running task (a table being backfilled or scanned) with
 * rows, rate, share done and ETA, drawn by cli-progress, which is loaded only here: runs that are
 * not watched never pay for it. Log lines printed meanwhile go above the bars (see terminal.ts).
 */
import { createRequire } from 'node:module';
import type { MultiBar, SingleBar } from 'cli-progress';
import { printLogsAbove } from './terminal.ts';
import { formatCount, formatDuration } from './units.ts';

export interface BarStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface BarLine {
  name: string;
  done: number;
  total: number | undefined;
  rate: number;
  etaMs: number | undefined;
}

const BAR_WIDTH = 24;

export class ProgressBars {
  readonly #multi: MultiBar;
  readonly #bars = new Map<string, SingleBar>();
  readonly #label: string;
  readonly #unit: string;

  constructor(stream: BarStream, label: string, unit: string) {
    const { MultiBar: Bars } = createRequire(import.meta.url)('cli-progress') as typeof import('cli-progress');
    this.#label = label;
    this.#unit = unit;
    this.#multi = new Bars({
      stream: stream as NodeJS.WritableStream,
      // Each bar's whole text is made here: cli-progress only places the lines.
      format: (_options, _params, payload: { text?: string }) => payload.text ?? '',
      clearOnComplete: true,
      hideCursor: true,
      linewrap: false,
      gracefulExit: false,
      autopadding: false,
      fps: 4,
    });
    printLogsAbove({ log: (text) => this.#multi.log(text.endsWith('\n') ? text : `${text}\n`) });
  }

  /** Draws the tasks' lines: a new bar for a new task. */
  show(lines: readonly BarLine[]): void {
    for (const line of lines) {
      const text = this.#text(line);
      const bar = this.#bars.get(line.name);
      if (bar) bar.update(line.done, { text });
      else this.#bars.set(line.name, this.#multi.create(line.total ?? 0, line.done, { text }));
    }
    this.#multi.update(); // now: the caller already paces the redraws
  }

  /** Removes a task's bar and prints its summary line above the others. */
  finish(name: string, summary: string): void {
    const bar = this.#bars.get(name);
    this.#multi.log(`${summary}\n`);
    if (bar) {
      this.#bars.delete(name);
      this.#multi.remove(bar);
    }
    if (this.#bars.size === 0) this.stop();
  }

  stop(): void {
    printLogsAbove(undefined);
    this.#multi.update();
    this.#multi.stop();
  }

  #text(line: BarLine): string {
    const rows = `${formatCount(line.done)}${line.total === undefined ? '' : `/${formatCount(line.total)}`} ${this.#unit}`;
    const parts = [`${this.#label} ${line.name}`];
    if (line.total !== undefined && line.total > 0) {
      const share = Math.min(1, line.done / line.total);
      const filled = Math.round(share * BAR_WIDTH);
      parts.push(`${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)} ${String(Math.floor(share * 100)).padStart(3)}%`);
    }
    parts.push(rows, `${formatCount(line.rate)} ${this.#unit}/s`);
    if (line.etaMs !== undefined) parts.push(`ETA ${formatDuration(line.etaMs)}`);
    return parts.join(' │ ');
  }
}
