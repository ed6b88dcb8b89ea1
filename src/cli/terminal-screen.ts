// The shared terminal of a run's display: messages on stdout, a one-row status line on stderr.
// stdout and stderr are often the same terminal, so the status line is drawn only when stdout's
// last row is complete (never beside unterminated message text, so never while a reply streams),
// is cut to fit one row, and is erased before anything else is written (with spaces when escape
// sequences are not wanted). Notes on stderr (warnings) start on a row of their own.

/** Cells a string takes on a terminal: East Asian wide characters and emoji take two. */
export function cellWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += wide(ch.codePointAt(0)!) ? 2 : 1;
  return w;
}

function wide(c: number): boolean {
  return (
    (c >= 0x1100 && c <= 0x115f) ||
    (c >= 0x2e80 && c <= 0xa4cf) ||
    (c >= 0xac00 && c <= 0xd7a3) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xfe30 && c <= 0xfe4f) ||
    (c >= 0xff00 && c <= 0xff60) ||
    (c >= 0xffe0 && c <= 0xffe6) ||
    (c >= 0x1f300 && c <= 0x1faff) ||
    (c >= 0x20000 && c <= 0x3fffd)
  );
}

/** The longest start of `s` that fits in `cells` cells. */
function fit(s: string, cells: number): string {
  let w = 0;
  let out = '';
  for (const ch of s) {
    w += wide(ch.codePointAt(0)!) ? 2 : 1;
    if (w > cells) break;
    out += ch;
  }
  return out;
}

export class TerminalScreen {
  /** stdout's last row holds text not yet ended by a line feed. */
  private midLine = false;
  /** Cells the status line takes on the screen now (0: not shown). */
  private statusCells = 0;

  constructor(
    private readonly out: NodeJS.WriteStream,
    private readonly err: NodeJS.WriteStream,
    private readonly o: { status: boolean; escapes: boolean },
  ) {}

  /** Message text to stdout. */
  write(text: string): void {
    if (!text) return;
    this.clearStatus();
    this.out.write(text);
    this.midLine = !text.endsWith('\n');
  }

  /** A whole line for stderr (a warning), on a row of its own. */
  note(line: string): void {
    this.clearStatus();
    if (this.midLine && this.out.isTTY && this.err.isTTY) this.write('\n');
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
