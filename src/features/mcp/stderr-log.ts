// The stderr of a stdio MCP server, written to the run folder (mcp/NAME.stderr.log) line by line
// with the values of the variables it was given put back as `${VAR}` (and every other known
// secret redacted): a server that prints its token does not leave it in the run folder. The last
// lines are kept, to tell why a server died at start.
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Readable } from 'node:stream';

/** Longest line held back waiting for its end (a line longer than this is written in pieces). */
const MAX_PENDING = 64 * 1024;
const TAIL_CHARS = 4000;

export class StderrLog {
  private fd: number | undefined;
  private pending = '';
  private recent = '';
  private ended: Promise<void> = Promise.resolve();

  constructor(
    readonly file: string,
    private readonly redact: (text: string) => string,
  ) {
    this.fd = openSync(file, 'a');
  }

  /** Read the server's stderr until it ends. */
  attach(stream: Readable): void {
    stream.setEncoding('utf8');
    stream.on('data', (piece: string) => this.push(piece));
    this.ended = new Promise<void>((resolve) => {
      stream.once('end', resolve);
      stream.once('close', resolve);
      stream.once('error', () => resolve());
    }).then(() => this.close());
  }

  private push(piece: string): void {
    this.pending += piece;
    const cut = this.pending.length > MAX_PENDING ? this.pending.length : this.pending.lastIndexOf('\n') + 1;
    if (cut <= 0) return;
    this.write(this.pending.slice(0, cut));
    this.pending = this.pending.slice(cut);
  }

  private write(text: string): void {
    const safe = this.redact(text);
    this.recent = (this.recent + safe).slice(-TAIL_CHARS);
    if (this.fd === undefined) return;
    try {
      writeSync(this.fd, safe);
    } catch {
      // a full disk: the log is lost, the server goes on
    }
  }

  /** Wait (at most `ms`) for the stream to end: a server that died has written all it will. */
  async settled(ms = 2000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.ended, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  /** The last lines (at most five, 300 characters; stack frames left out), on one line. */
  tail(): string {
    const lines = (this.recent + this.redact(this.pending))
      .split('\n')
      // eslint-disable-next-line no-control-regex -- a server's control characters never reach a message
      .map((l) => l.replace(/[\u0000-\u001f\u007f]/g, ' ').trim())
      .filter((l) => l && !/^at\s/.test(l) && !/^[{}]$/.test(l))
      .slice(-5);
    const text = lines.join(' | ');
    return text.length > 300 ? `...${text.slice(-300)}` : text;
  }

  /** Write what is held back and close the file; safe to call twice. */
  close(): void {
    if (this.pending) {
      this.write(this.pending);
      this.pending = '';
    }
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined)
      try {
        closeSync(fd);
      } catch {
        // already closed
      }
  }
}
