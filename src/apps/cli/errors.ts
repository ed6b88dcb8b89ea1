// Errors shown to a person: one clear message, no stack trace (unless SOP_DEBUG=1).
// A message that names an option of a run carries it as data (src/shared/errors.ts `say`): the API
// says `options.autoRun`, the CLI its flag (`--auto-run`), from the option table
// (src/api/option-table.ts). No message text is matched.
import { SopError, formatDiagnostic } from '../../format/sop/diagnostics.js';
import { optionSpec } from '../../api/option-types.js';
import { apiOptionName, renderMessage, type Message, type MessagePart, type OptionNamer } from '../../shared/errors.js';
import { makeRedactor } from '../../shared/util/redact.js';

/** How the CLI names an option a message names: by its flag, in the flag's unit. */
export const flagName: OptionNamer = (m) => {
  const spec = optionSpec(m.option);
  if (spec?.flag === undefined) return apiOptionName(m); // an option of the API only
  const flag = `--${spec.flag}`;
  if (m.form === 'value') return spec.unit ? String(Number(m.set) / spec.unit.scale) : String(m.set);
  if (m.form === 'unit') return spec.unit?.flag ?? m.api ?? '';
  if (m.form === 'resume') return `sop resume RUN_DIR ${flag}`;
  if (m.form === 'continue') return `resume with ${flagName({ ...m, form: 'name' })}`;
  if (m.key !== undefined) return `${flag} ${m.key}=VALUE`;
  if (m.set !== undefined) return spec.type === 'boolean' ? (m.set === false ? `--no-${spec.flag}` : flag) : `${flag} ${String(m.set)}`;
  return m.arg && spec.metavar ? `${flag} ${spec.metavar}` : flag;
};

/** A message of the engine (text, parts, an error or a warning event) as the CLI says it: the options it names by their flags. */
export function cliMessage(m: Message | { message: string; parts?: readonly MessagePart[] | undefined }): string {
  if (typeof m === 'string') return m;
  if (Array.isArray(m)) return renderMessage(m as readonly MessagePart[], flagName);
  const e = m as { message: string; parts?: readonly MessagePart[] };
  return e.parts ? renderMessage(e.parts, flagName) : e.message;
}

export function reportError(err: unknown, stream: NodeJS.WritableStream = process.stderr): number {
  const redact = makeRedactor();
  if (err instanceof SopError) {
    for (const d of err.diagnostics) stream.write(redact(formatDiagnostic(d)) + '\n');
    return 1;
  }
  const message = err instanceof Error ? cliMessage(err) : String(err);
  stream.write(redact(`error: ${message}`) + '\n');
  if (process.env.SOP_DEBUG === '1' && err instanceof Error && err.stack) stream.write(redact(err.stack) + '\n');
  return 1;
}
