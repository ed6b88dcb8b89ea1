// Errors shown to a person: one clear message, no stack trace (unless SOP_DEBUG=1).
import { SopError, formatDiagnostic } from '../sop/diagnostics.js';
import { makeRedactor } from '../util/redact.js';

export function reportError(err: unknown, stream: NodeJS.WritableStream = process.stderr): number {
  const redact = makeRedactor();
  if (err instanceof SopError) {
    for (const d of err.diagnostics) stream.write(redact(formatDiagnostic(d)) + '\n');
    return 1;
  }
  const message = err instanceof Error ? err.message : String(err);
  stream.write(redact(`error: ${message}`) + '\n');
  if (process.env.SOP_DEBUG === '1' && err instanceof Error && err.stack) stream.write(redact(err.stack) + '\n');
  return 1;
}
