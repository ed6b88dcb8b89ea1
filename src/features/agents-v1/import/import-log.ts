// What an import reports: errors (the config cannot be converted) and warnings (a key that is
// not carried, or a known Agents 1.0 problem that applies), each naming the key's JSON pointer.
import type { Diagnostic } from '../../../format/sop/diagnostics.js';
import { pointerOf } from '../../../format/sop/json-source.js';

export type KeyPath = ReadonlyArray<string | number>;

/** An own key of a parsed object (never one inherited from Object.prototype, such as "toString"). */
export const has = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

export class ImportLog {
  private readonly items: Diagnostic[] = [];
  /** Warnings reported once for every place they apply: first place and how many others. */
  private readonly grouped = new Map<string, { path: KeyPath; message: string; others: number }>();

  constructor(private readonly file: string) {}

  warn(path: KeyPath, message: string): void {
    this.items.push({ severity: 'warning', pointer: pointerOf(path), message, file: this.file });
  }

  error(path: KeyPath, message: string): void {
    this.items.push({ severity: 'error', pointer: pointerOf(path), message, file: this.file });
  }

  /** A warning that may apply in many places (e.g. every LLM block's log_path): said once. */
  warnOnce(group: string, path: KeyPath, message: string): void {
    const g = this.grouped.get(group);
    if (g) g.others++;
    else this.grouped.set(group, { path, message, others: 0 });
  }

  get hasErrors(): boolean {
    return this.items.some((d) => d.severity === 'error');
  }

  diagnostics(): Diagnostic[] {
    const out = [...this.items];
    for (const g of this.grouped.values()) {
      const more = g.others > 0 ? ` (the same applies to ${g.others} more place${g.others > 1 ? 's' : ''})` : '';
      out.push({ severity: 'warning', pointer: pointerOf(g.path), message: g.message + more, file: this.file });
    }
    return out;
  }
}

/** Text of an Agents 1.0 prompt, made safe for our Handlebars rendering ("{{" stays literal). */
export function literalText(text: string): string {
  return text.replace(/\{\{/g, '\\{{');
}
