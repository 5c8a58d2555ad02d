/**
 * Progress of long work (a backfill, a full scan). On a terminal: one line, redrawn in place,
 * with rows/s and ETA over every running task (backfills run several tables at once). Elsewhere
 * (journald, Docker logs): a log line per running task every `logIntervalMs`, and one when a task
 * ends. The rate is taken over the last ten seconds, so it follows changes in speed.
 */
import type { Logger } from './logger.ts';
import { formatDuration } from './units.ts';

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
  /** On a terminal: how often the line is redrawn; default 250 ms. */
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
  #lineShown = false;

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

  /** Draws the line (terminal) or logs one line per running task; the timer calls it. */
  render(): void {
    const tasks = this.snapshot();
    if (tasks.length === 0) return;
    if (this.#tty) {
      this.#drawLine(this.#summary(tasks));
      return;
    }
    for (const task of tasks) this.#log(this.#describe(task), task);
  }

  /** Stops the timer and clears the terminal line. */
  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#clearLine();
  }

  /** @internal Task.done() lands here. */
  taskDone(task: Task): void {
    this.#tasks.delete(task);
    const snap = task.snapshot(this.now());
    const average = snap.elapsedMs > 0 ? (snap.done * 1000) / snap.elapsedMs : 0;
    const line =
      `${this.#label} ${snap.name}: ${count(snap.done)} ${this.#unit} in ${formatDuration(snap.elapsedMs)}` +
      ` (${count(average)} ${this.#unit}/s)`;
    if (this.#tty) {
      this.#clearLine();
      this.#stream.write(`${line}\n`);
    } else {
      this.#log(line, { ...snap, rate: average, etaMs: 0 });
    }
    if (this.#tasks.size === 0) this.close();
    else if (this.#tty) this.render();
  }

  #describe(task: TaskSnapshot): string {
    const parts = [`${this.#label} ${task.name}: ${this.#amount(task.done, task.total)}`];
    parts.push(`${count(task.rate)} ${this.#unit}/s`);
    if (task.etaMs !== undefined) parts.push(`ETA ${formatDuration(task.etaMs)}`);
    return parts.join(', ');
  }

  #summary(tasks: TaskSnapshot[]): string {
    if (tasks.length === 1 && tasks[0]) return this.#describe(tasks[0]).replace(/, /g, ' · ');
    const done = tasks.reduce((sum, t) => sum + t.done, 0);
    const total = tasks.every((t) => t.total !== undefined) ? tasks.reduce((sum, t) => sum + (t.total ?? 0), 0) : undefined;
    const rate = tasks.reduce((sum, t) => sum + t.rate, 0);
    const eta = tasks.every((t) => t.etaMs !== undefined) ? Math.max(...tasks.map((t) => t.etaMs ?? 0)) : undefined;
    const parts = [`${this.#label} ${tasks.length} tables: ${this.#amount(done, total)}`, `${count(rate)} ${this.#unit}/s`];
    if (eta !== undefined) parts.push(`ETA ${formatDuration(eta)}`);
    parts.push(tasks.map((t) => (t.total ? `${t.name} ${percent(t.done, t.total)}` : t.name)).join(', '));
    return parts.join(' · ');
  }

  #amount(done: number, total: number | undefined): string {
    if (total === undefined) return `${count(done)} ${this.#unit}`;
    return `${count(done)}/${count(total)} ${this.#unit} (${percent(done, total)})`;
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

  #drawLine(text: string): void {
    const width = Math.max(20, (this.#stream.columns ?? 100) - 1);
    const line = text.length > width ? `${text.slice(0, width - 1)}…` : text;
    this.#stream.write(`\r\x1b[2K${line}`);
    this.#lineShown = true;
  }

  #clearLine(): void {
    if (this.#tty && this.#lineShown) this.#stream.write('\r\x1b[2K');
    this.#lineShown = false;
  }
}

export function createProgress(options: ProgressOptions): ProgressReporter {
  return new ProgressReporter(options);
}

function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function percent(done: number, total: number): string {
  if (total <= 0) return '100%';
  return `${Math.min(100, Math.floor((done * 100) / total))}%`;
}
