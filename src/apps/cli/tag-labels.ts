// Output tags read as a label and their content: `<verdict>The affirmative wins.</verdict>` is
// shown as `verdict: The affirmative wins.`. A reply is streamed in pieces, so a tag split
// across pieces is held back until it is whole (or is clearly not a tag).

const TAG = /<(\/?)([A-Za-z][\w.-]{0,39})>/g;
/** A `<` that may still become a tag when more text arrives. */
const PARTIAL = /<\/?[A-Za-z]?[\w.-]{0,39}$/;

export type LabelStyle = (name: string) => string;

const plainLabel: LabelStyle = (name) => `${name}: `;

/** `text` with each `<tag>` replaced by a label and each `</tag>` dropped. */
export function labelTags(text: string, style: LabelStyle = plainLabel): string {
  return text.replace(TAG, (_m, close: string, name: string) => (close ? '' : style(name)));
}

/** The same for a streamed reply: push pieces, then flush what is held back at the end. */
export class TagLabeller {
  private held = '';
  constructor(private readonly style: LabelStyle = plainLabel) {}

  push(piece: string): string {
    const text = this.held + piece;
    const partial = PARTIAL.exec(text);
    const cut = partial ? partial.index : text.length;
    this.held = text.slice(cut);
    return labelTags(text.slice(0, cut), this.style);
  }

  flush(): string {
    const rest = this.held;
    this.held = '';
    return labelTags(rest, this.style);
  }
}
