// Diagnostics: one problem in one file, at one JSON pointer, rendered as a single line.
import { EngineError } from '../../shared/errors.js';
import type { Position } from './json-source.js';

export type Severity = 'error' | 'warning';

export interface Diagnostic {
  severity: Severity;
  /** JSON pointer of the offending value ("" for the whole document). */
  pointer: string;
  message: string;
  file?: string;
  position?: Position;
}

export function formatDiagnostic(d: Diagnostic): string {
  const where = [d.file ?? '<input>'];
  if (d.position) where.push(`${d.position.line}:${d.position.column}`);
  const pointer = d.pointer === '' ? '/' : d.pointer;
  const prefix = d.severity === 'warning' ? 'warning: ' : '';
  return `${where.join(':')}: ${pointer}: ${prefix}${d.message}`;
}

/** Thrown when a SOP cannot be loaded; carries every diagnostic found. */
export class SopError extends EngineError {
  constructor(readonly diagnostics: Diagnostic[]) {
    super(
      diagnostics
        .filter((d) => d.severity === 'error')
        .map(formatDiagnostic)
        .join('\n'),
      'SOP_INVALID',
    );
    this.name = 'SopError';
  }
}
