// The shared terminal of a run's display: messages on stdout, a one-row status line on stderr.
// stdout and stderr are often the same terminal, so the status line is drawn only when stdout's
// last row is complete (never beside unterminated message text, so never while a reply streams),
// is cut to fit one row, and is erased before anything else is written (with spaces when escape
// sequences are not wanted). Notes on stderr (warnings) start on a row of their own. On a
// terminal, message text wraps at word boundaries (src/apps/cli/word-wrap.ts).

import { cellWidth, fit } from './terminal-cells.js';
import { WordWrap } from './word-wrap.js';

export class TerminalScreen {
  /** stdout's last row holds text not yet ended by a line feed. */
  private midLine = false;
  /** Cells the status line takes on the screen now (0: not shown). */
  private statusCells = 0;
  /** Word wrapping of message text, on a terminal. */
  private readonly wrap: WordWrap | undefined;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly err: NodeJS.WriteStream,
    private readonly o: { status: boolean; escapes: boolean },
  ) {
    this.wrap = out.isTTY ? new WordWrap(() => out.columns || 80) : undefined;
  }

  /** Message text to stdout. */
  write(text: string): void {
    if (!text) return;
    this.clearStatus();
    const shown = this.wrap ? this.wrap.push(text) : text;
    if (shown) this.out.write(shown);
    this.midLine = this.wrap ? this.wrap.midLine : !text.endsWith('\n');
  }

  /** A whole line for stderr (a warning), on a row of its own. */
  note(line: string): void {
    this.clearStatus();
    if (this.midLine && this.out.isTTY && this.err.isTTY) this.write('\n'); // ends the row, the word held back first
    this.err.write(line);
  }

  /** Show `text` as the status line, when that cannot touch message text. */
  status(text: string): void {
    if (!this.o.status || (this.midLine && this.out.isTTY)) return;
    this.clearStatus();
    const shown = fit(text, Math.max((this.err.columns || 80) - 1, 1));
    if (!shown) return;
    this.err.write(this.o.escapes ? `\x1b[2m${shown}\x1b[0m` : shown);
    this.statusCells = cellWidth(shown);
  }

  clearStatus(): void {
    if (this.statusCells === 0) return;
    this.err.write(this.o.escapes ? '\r\x1b[2K' : `\r${' '.repeat(this.statusCells)}\r`);
    this.statusCells = 0;
  }
}
