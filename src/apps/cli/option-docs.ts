// The table of a run's options in docs/api.md, made from the option table (src/api/option-table.ts):
// `npm run docs:options` writes it between its markers, and test/option-table.test.ts checks it.
import type { OptionSpec } from '../../api/option-table.js';
import { optionEntries } from '../../api/option-types.js';
import { EngineError } from '../../shared/errors.js';

export const DOC_START = '<!-- options: made by npm run docs:options from src/api/option-table.ts -->';
export const DOC_END = '<!-- options: end -->';

const cell = (s: string) => s.replace(/\|/g, '\\|');

function apiName(spec: OptionSpec, name: string): string {
  if (spec.api === false) return name;
  return typeof spec.api === 'string' ? spec.api : `${spec.api[0]}.${spec.api[1]}`;
}

function flagText(spec: OptionSpec): string {
  if (spec.flag === undefined) return '';
  const commands = Object.keys(spec.on ?? {}).filter((c) => c !== 'run');
  const unit = spec.unit ? ` (${spec.unit.flag})` : '';
  return `\`--${spec.flag}\`${unit}${commands.length > 0 ? `; also ${commands.join(', ')}` : ''}`;
}

/** The options of RunSopOptions as a Markdown table: option, flag, default, what a resume keeps, what it does. */
export function optionTableMarkdown(): string {
  const rows = optionEntries()
    .filter(([, spec]) => spec.api !== false)
    .map(([name, spec]) => {
      const keeps = spec.resume ? (spec.resume.merge === 'union' ? 'yes, with those given again' : 'yes') : '';
      const what = spec.doc ?? '';
      return `| \`${apiName(spec, name)}\` | ${flagText(spec)} | ${cell(spec.default ?? '')} | ${keeps} | ${cell(what)} |`;
    });
  return [DOC_START, '', '| option | flag | default | a resume keeps it | what |', '|---|---|---|---|---|', ...rows, '', DOC_END].join(
    '\n',
  );
}

/** A document with its table of options made again. */
export function withOptionTable(doc: string): string {
  const start = doc.indexOf(DOC_START);
  const end = doc.indexOf(DOC_END);
  if (start < 0 || end < start) throw new EngineError(`no ${DOC_START} ... ${DOC_END} markers`, 'INTERNAL');
  return doc.slice(0, start) + optionTableMarkdown() + doc.slice(end + DOC_END.length);
}
