// sop validate FILE...: one line per problem, exit 1 if any file has an error. SOP files get the
// schema and graph checks; cassette files (recognised by their shape) the cassette schema.
import { cassetteDiagnostics, isCassetteDocument } from '../../core/llm/cassette-check.js';
import { SopError, formatDiagnostic } from '../../format/sop/diagnostics.js';
import { loadSopFile, locate, parseSopText, readSopText } from '../../api/loader/checked-load.js';
import { startupDiagnostics } from './startup-checks.js';
import { subflowFileDiagnostics } from './subflow-files.js';
import { resolveSopArg } from './builtin-sops.js';
import { PluginError } from '../../api/plugins.js';
import { approveSopPlugins } from './plugin-approval.js';

/** A built-in SOP when `file` is not a file here (sop validate jarvis); else `file`, whose problems the loader reports. */
function builtinOrSelf(file: string): string {
  try {
    return resolveSopArg(file);
  } catch {
    return file;
  }
}

/** Warnings of a valid file and what kind of file it was; throws SopError when invalid. */
function check(file: string): { warnings: SopError['diagnostics']; kind: 'sop' | 'cassette' } {
  const text = readSopText(file);
  const doc = parseSopText(text, file);
  if (isCassetteDocument(doc)) {
    const diags = cassetteDiagnostics(doc);
    if (diags.length > 0) throw new SopError(locate(diags, text, file));
    return { warnings: [], kind: 'cassette' };
  }
  const loaded = loadSopFile(file);
  const subflows = subflowFileDiagnostics(loaded.sop, file); // files: sub-SOPs must be regular files
  if (subflows.length > 0) throw new SopError(locate(subflows, text, file));
  // What `sop run` would refuse at start-up (sub-flow files, command arguments): startup-checks.ts
  const known = new Set(loaded.warnings.map((d) => `${d.pointer}\u0000${d.message}`));
  const more = locate(
    startupDiagnostics(loaded.sop, file).filter((d) => !known.has(`${d.pointer}\u0000${d.message}`)),
    text,
    file,
  );
  if (more.length > 0) throw new SopError(more);
  return { warnings: loaded.warnings, kind: 'sop' };
}

/**
 * `sop validate` with the modules each SOP names in "plugins" loaded first (with the user's
 * approval: --yes, the terminal, the allow file), since the worlds and policies they register
 * are what the SOP is checked against. A module refused is one line, and its file fails.
 */
export async function validateWithPlugins(files: string[], opts: { quiet: boolean; yes?: boolean }): Promise<number> {
  const refused = new Set<string>();
  for (const file of files)
    try {
      await approveSopPlugins(builtinOrSelf(file), { yes: opts.yes, command: 'sop validate' });
    } catch (err) {
      if (!(err instanceof PluginError)) throw err;
      refused.add(file);
      process.stderr.write(`${file}: /plugins: ${err.message}\n`); // file: pointer: what is wrong, as every other refusal
    }
  const code = validateCommand(
    files.filter((f) => !refused.has(f)),
    opts,
    files.length,
  );
  return refused.size > 0 ? 1 : code;
}

export function validateCommand(files: string[], opts: { quiet: boolean }, total = files.length): number {
  let failed = total - files.length;
  for (const file of files) {
    try {
      const { warnings, kind } = check(builtinOrSelf(file));
      for (const w of warnings) process.stderr.write(formatDiagnostic(w) + '\n');
      const notes = [
        kind === 'cassette' ? 'cassette' : '',
        warnings.length ? `${warnings.length} warning${warnings.length > 1 ? 's' : ''}` : '',
      ].filter(Boolean);
      if (!opts.quiet) process.stdout.write(`${file}: ok${notes.length ? ` (${notes.join(', ')})` : ''}\n`);
    } catch (err) {
      if (!(err instanceof SopError)) throw err;
      failed++;
      for (const d of err.diagnostics) process.stderr.write(formatDiagnostic(d) + '\n');
    }
  }
  if (total > 1 && !opts.quiet) process.stdout.write(`${total - failed} of ${total} files valid\n`);
  return failed > 0 ? 1 : 0;
}
