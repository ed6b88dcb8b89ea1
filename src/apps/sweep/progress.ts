// The progress of a sweep: on a terminal a bar redrawn in place (done, running, failed, ETA,
// tokens and cost); elsewhere one line per run that did not finish, and the closing line.
import { isDone, type ResultLine } from './results.js';

export interface ProgressOptions {
  total: number;
  /** Runs already done before this sweep started (skipped). */
  skipped: number;
  out: NodeJS.WriteStream | { write(s: string): unknown; isTTY?: boolean; columns?: number };
}

export class Progress {
  done = 0;
  running = 0;
  failed = 0;
  tokens = 0;
  cost = 0;
  private readonly started = Date.now();
  private timer: ReturnType<typeof setInterval> | undefined;
  private readonly tty: boolean;

  constructor(private readonly o: ProgressOptions) {
    this.tty = o.out.isTTY === true;
    if (this.tty) {
      this.timer = setInterval(() => this.draw(), 250);
      this.timer.unref();
    }
  }

  start(): void {
    this.running++;
  }

  /** Tokens and cost of one LLM call, as it happens. */
  call(tokens: number, cost: number | undefined): void {
    this.tokens += tokens;
    if (cost) this.cost += cost;
  }

  end(r: ResultLine): void {
    this.running = Math.max(0, this.running - 1);
    this.done++;
    if (!isDone(r.status)) {
      this.failed++;
      // the reason, on one line of its own (on a terminal above the bar, which is redrawn)
      const why = r.error ? ` (${oneLine(r.error, 300)})` : '';
      this.o.out.write(`${this.tty ? '\r\x1b[2K' : ''}${r.key}: ${r.status}${why}\n`);
      if (this.tty) this.draw();
    }
  }

  private line(): string {
    const todo = this.o.total - this.o.skipped;
    const width = 24;
    const filled = todo > 0 ? Math.round((width * this.done) / todo) : width;
    const elapsed = (Date.now() - this.started) / 1000;
    const eta = this.done > 0 && this.done < todo ? `ETA ${clock(((todo - this.done) * elapsed) / this.done)}` : `${clock(elapsed)}`;
    return (
      `[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${this.done}/${todo} done · ${this.running} running · ` +
      `${this.failed} failed · ${eta} · ${this.tokens.toLocaleString('en')} tokens${this.cost > 0 ? ` · $${this.cost.toFixed(4)}` : ''}` +
      (this.o.skipped ? ` · ${this.o.skipped} skipped` : '')
    );
  }

  draw(): void {
    const cols = (this.o.out as { columns?: number }).columns || 120; // 0 when the terminal has no size
    this.o.out.write(`\r\x1b[2K${this.line().slice(0, Math.max(20, cols - 1))}`);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.tty) {
      this.draw();
      this.o.out.write('\n');
    }
  }
}

function oneLine(s: string, max: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > max ? one.slice(0, max - 1) + '…' : one;
}

function clock(s: number): string {
  const t = Math.max(0, Math.round(s));
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = t % 60;
  return h > 0 ? `${h}h${String(m).padStart(2, '0')}m` : m > 0 ? `${m}m${String(sec).padStart(2, '0')}s` : `${sec}s`;
}
