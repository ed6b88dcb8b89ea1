// Redaction of text that arrives in pieces (streamed LLM deltas on a terminal): a secret split
// across two pieces must not be printed either. The tail of what arrived, as long as the
// longest secret form less one character, is held back until the next piece shows whether it
// starts a secret, or until the end of the stream.
import type { Redactor } from './redact.js';

export class StreamRedactor {
  private pending = '';
  private readonly hold: number;

  constructor(private readonly redact: Redactor) {
    this.hold = Math.max(0, (redact.longest ?? 0) - 1);
  }

  /** The redacted text that can be shown now. */
  push(piece: string): string {
    if (this.hold === 0 || !this.redact.spans) return this.redact(piece);
    this.pending += piece;
    let cut = this.pending.length - this.hold;
    if (cut <= 0) return '';
    // A secret that starts before the cut and ends after it is complete: show it redacted whole.
    for (const [start, end] of this.redact.spans(this.pending)) {
      if (start < cut && end > cut) cut = end;
    }
    const ready = this.pending.slice(0, cut);
    this.pending = this.pending.slice(cut);
    return this.redact(ready);
  }

  /** The end of the stream: the rest, redacted. */
  flush(): string {
    const rest = this.pending;
    this.pending = '';
    return rest ? this.redact(rest) : '';
  }
}
