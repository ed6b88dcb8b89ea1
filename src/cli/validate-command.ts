// sop validate FILE...: one line per problem, exit 1 if any file has an error.
import { SopError, formatDiagnostic } from '../sop/diagnostics.js';
import { loadSopFile } from '../sop/load.js';

export function validateCommand(files: string[], opts: { quiet: boolean }): number {
  let failed = 0;
  for (const file of files) {
    try {
      const { warnings } = loadSopFile(file);
      for (const w of warnings) process.stderr.write(formatDiagnostic(w) + '\n');
      if (!opts.quiet) process.stdout.write(`${file}: ok${warnings.length ? ` (${warnings.length} warning${warnings.length > 1 ? 's' : ''})` : ''}\n`);
    } catch (err) {
      if (!(err instanceof SopError)) throw err;
      failed++;
      for (const d of err.diagnostics) process.stderr.write(formatDiagnostic(d) + '\n');
    }
  }
  if (files.length > 1 && !opts.quiet) process.stdout.write(`${files.length - failed} of ${files.length} files valid\n`);
  return failed > 0 ? 1 : 0;
}
