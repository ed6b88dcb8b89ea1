// sop import CONFIG.json [-o OUT.sop.json]: convert an Agents 1.0 config into a SOP. Warnings
// (keys not carried, known Agents 1.0 problems) go to stderr, one line each, naming the key in
// the original file; the SOP goes to OUT or to stdout.
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { importAndValidate } from '../../api/loader/import-and-validate.js';
import { isAgentsV1Config } from '../../features/agents-v1/import/detect.js';
import { SopError, formatDiagnostic } from '../../format/sop/diagnostics.js';
import { parseSopText, readSopText } from '../../format/sop/sop-file.js';
import { packageRoot } from '../../shared/util/package-root.js';

export interface ImportCommandOptions {
  file: string;
  out?: string;
  force?: boolean;
}

export function importCommand(o: ImportCommandOptions): number {
  const text = readSopText(o.file);
  const doc = parseSopText(text, o.file);
  if (!isAgentsV1Config(doc)) {
    throw new SopError([
      {
        severity: 'error',
        pointer: '',
        file: o.file,
        message: 'not an Agents 1.0 config (expected top-level "config", "relations" and "states" whose entries have "agent_states")',
      },
    ]);
  }
  if (o.out && existsSync(o.out) && !o.force) {
    process.stderr.write(`error: ${o.out} exists; pass --force to overwrite it\n`);
    return 1;
  }
  const outFile = o.out ?? o.file;
  // "$schema" lets editors autocomplete the written file; printed output has no known place.
  const schema = o.out ? relative(dirname(resolve(o.out)), join(packageRoot(), 'schemas', 'sop.schema.json')) : undefined;
  const { sop, warnings } = importAndValidate(doc, { file: o.file, outFile, schemaRef: schema }, text);
  for (const w of warnings) process.stderr.write(formatDiagnostic(w) + '\n');
  const json = JSON.stringify(sop, null, 2) + '\n';
  if (o.out) {
    writeFileSync(o.out, json);
    process.stderr.write(
      `Wrote ${o.out}${warnings.length ? ` (${warnings.length} warning${warnings.length > 1 ? 's' : ''} above)` : ''}. Run it with: sop run ${o.out}\n`,
    );
  } else {
    process.stdout.write(json);
  }
  return 0;
}
