/**
 * Progress of long work (a backfill, a full scan). On a terminal: a bar per running task with
 * rows, rows/s, share done and ETA (progress-bars.ts). Elsewhere (journald, Docker logs) or with
 * JSON logs: a log line per running task every `logIntervalMs`, and one when a task ends. The
 * rate is taken over the last ten seconds, so it follows changes in speed.
 */
import type { Logger } from './logger.ts';
import { ProgressBars } from './progress-bars.ts';
import { formatCount, formatDuration } from './units.ts';

export interface ProgressStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface ProgressOptions {
  /** What is being done: `backfill`, `full scan`. */
  label: string;
  /** Default `rows`. */
  unit?: string;
  /** Default process.stderr (stdout carries the JSON log). */
  stream?: ProgressStream;
  /** Default: whether the stream is a terminal. */
  tty?: boolean;
  /** Off a terminal, lines go to this logger; without one, as text to the stream. */
  logger?: Pick<Logger, 'info'>;
  /** Off a terminal: how often; default 10 s (`log.progressInterval`). */
  logIntervalMs?: number;
  /** On a terminal: how often the bars are updated; default 250 ms. */
  redrawIntervalMs?: number;
  now?: () => number;
}

export interface ProgressTask {
  readonly name: string;
  /** Count more units done. */
  add(count: number): void;
  /** The total, once known (a list's first page may tell it); undefined = unknown. */
  setTotal(total: number | undefined): void;
  /** The task has ended: prints its summary. */
  done(): void;
}

export interface TaskSnapshot {
  name: string;
  done: number;
  total: number | undefined;
  /** Units per second, over the recent window. */
  rate: number;
  /** Milliseconds left, when the total and a rate are known. */
  etaMs: number | undefined;
  elapsedMs: number;
}

const RATE_WINDOW_MS = 10_000;
/** Off a terminal, how often a progress line is logged unless configured (`log.progressInterval`). */
export const DEFAULT_PROGRESS_LOG_INTERVAL_MS = 10_000;

class Task implements ProgressTask {
  readonly name: string;
  readonly startedAt: number;
  doneCount = 0;
  total: number | undefined;
  finished = false;
  readonly #samples: { at: number; done: number }[];
  readonly #reporter: ProgressReporter;

  constructor(reporter: ProgressReporter, name: string, total: number | undefined, now: number) {
    this.#reporter = reporter;
    this.name = name;
    this.total = total;
    this.startedAt = now;
    this.#samples = [{ at: now, done: 0 }];
  }

  add(count: number): void {
    if (this.finished || count <= 0) return;
    this.doneCount += count;
    const now = this.#reporter.now();
    this.#samples.push({ at: now, done: this.doneCount });
    while (this.#samples.length > 2 && now - (this.#samples[1]?.at ?? now) > RATE_WINDOW_MS) this.#samples.shift();
  }

  setTotal(total: number | undefined): void {
    this.total = total;
  }

  done(): void {
    if (this.finished) return;
    this.finished = true;
    this.#reporter.taskDone(this);
  }

  snapshot(now: number): TaskSnapshot {
    const first = this.#samples[0] ?? { at: this.startedAt, done: 0 };
    const span = now - first.at;
    const rate = span > 0 ? ((this.doneCount - first.done) * 1000) / span : 0;
    const left = this.total === undefined ? undefined : Math.max(0, this.total - this.doneCount);
    return {
      name: this.name,
      done: this.doneCount,
      total: this.total,
      rate,
      etaMs: left === undefined ? undefined : left === 0 ? 0 : rate > 0 ? (left / rate) * 1000 : undefined,
      elapsedMs: now - this.startedAt,
    };
  }
}

export class ProgressReporter {
  readonly now: () => number;
  readonly #label: string;
  readonly #unit: string;
  readonly #stream: ProgressStream;
  readonly #tty: boolean;
  readonly #logger: Pick<Logger, 'info'> | undefined;
  readonly #intervalMs: number;
  readonly #tasks = new Set<Task>();
  #timer: NodeJS.Timeout | undefined;
  #bars: ProgressBars | undefined;

  constructor(options: ProgressOptions) {
    this.now = options.now ?? Date.now;
    this.#label = options.label;
    this.#unit = options.unit ?? 'rows';
    this.#stream = options.stream ?? process.stderr;
    this.#tty = options.tty ?? this.#stream.isTTY === true;
    this.#logger = options.logger;
    this.#intervalMs = this.#tty ? (options.redrawIntervalMs ?? 250) : (options.logIntervalMs ?? DEFAULT_PROGRESS_LOG_INTERVAL_MS);
  }

  /** Starts tracking a task (a table). */
  task(name: string, total?: number): ProgressTask {
    const task = new Task(this, name, total, this.now());
    this.#tasks.add(task);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.render(), this.#intervalMs);
      this.#timer.unref(); // progress never keeps the process alive
    }
    return task;
  }

  /** Snapshots of the running tasks. */
  snapshot(): TaskSnapshot[] {
    const now = this.now();
    return [...this.#tasks].map((task) => task.snapshot(now));
  }

  /** Draws the bars (terminal) or logs one line per running task; the timer calls it. */
  render(): void {
    const tasks = this.snapshot();
    if (tasks.length === 0) return;
    if (this.#tty) {
      this.#bars ??= new ProgressBars(this.#stream, this.#label, this.#unit);
      this.#bars.show(tasks);
      return;
    }
    for (const task of tasks) this.#log(this.#describe(task), task);
  }

  /** Stops the timer and takes the bars off the terminal. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#bars?.stop();
    this.#bars = undefined;
  }

  /** @internal Task.done() lands here. */
  taskDone(task: Task): void {
    this.#tasks.delete(task);
    const snap = task.snapshot(this.now());
    const average = snap.elapsedMs > 0 ? (snap.done * 1000) / snap.elapsedMs : 0;
    const line =
      `${this.#label} ${snap.name}: ${formatCount(snap.done)} ${snap.done === 1 ? this.#unit.replace(/s$/, '') : this.#unit} in ${formatDuration(snap.elapsedMs)}` +
      ` (${formatCount(average)} ${this.#unit}/s)`;
    if (this.#tty && this.#bars) {
      this.#bars.finish(snap.name, line);
      if (this.#tasks.size === 0) this.#bars = undefined;
    } else if (this.#tty) {
      this.#stream.write(`${line}\n`);
    } else {
      this.#log(line, { ...snap, rate: average, etaMs: 0 });
    }
    if (this.#tasks.size === 0) this.close();
  }

  #describe(task: TaskSnapshot): string {
    const parts = [`${this.#label} ${task.name}: ${this.#amount(task.done, task.total)}`];
    parts.push(`${formatCount(task.rate)} ${this.#unit}/s`);
    if (task.etaMs !== undefined) parts.push(`ETA ${formatDuration(task.etaMs)}`);
    return parts.join(', ');
  }

  #amount(done: number, total: number | undefined): string {
    if (total === undefined) return `${formatCount(done)} ${this.#unit}`;
    return `${formatCount(done)}/${formatCount(total)} ${this.#unit} (${percent(done, total)})`;
  }

  #log(message: string, task: TaskSnapshot): void {
    if (this.#logger) {
      this.#logger.info(
        {
          progress: {
            work: this.#label,
            task: task.name,
            done: task.done,
            total: task.total,
            perSecond: Math.round(task.rate),
            etaSeconds: task.etaMs === undefined ? undefined : Math.round(task.etaMs / 1000),
          },
        },
        message,
      );
    } else {
      this.#stream.write(`${message}\n`);
    }
  }
}

export function createProgress(options: ProgressOptions): ProgressReporter {
  return new ProgressReporter(options);
}


function percent(done: number, total: number): string {
  if (total <= 0) return '100%';
  return `${Math.min(100, Math.floor((done * 100) / total))}%`;
}
