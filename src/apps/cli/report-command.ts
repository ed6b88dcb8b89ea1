// sop report DIR [--check] [--verify] [--json] (docs/validity.md): the SOP's targets against a
// run or a sweep (src/apps/report), and with --verify the folder's provenance recomputed.
import { EXIT } from './exit-codes.js';
import { report } from '../report/report.js';
import { computeProvenance, readProvenance, verifyProvenance, PROVENANCE_FILE } from '../report/provenance.js';
import { readFolder } from '../report/runs.js';
import { readResults } from '../sweep/results.js';
import { join } from 'node:path';

export interface ReportCommandOptions {
  dir: string;
  check?: boolean;
  verify?: boolean;
  json?: boolean;
}

export async function reportCommand(o: ReportCommandOptions): Promise<number> {
  const out = (s: string) => process.stdout.write(s);
  const err = (s: string) => process.stderr.write(s);
  let code: number = EXIT.ok;
  if (o.verify) {
    const saved = readProvenance(o.dir);
    const folder = readFolder(o.dir);
    // every run the provenance names (a sweep's failed runs too), read from its folder now
    const lines = folder.kind === 'sweep' ? readResults(folder.dir) : undefined;
    const runs = saved.runs.map((r) => ({
      ...r,
      dir:
        folder.kind === 'run'
          ? folder.dir
          : (folder.runs.find((x) => x.key === r.key)?.dir ?? lines?.get(r.key)?.run_dir ?? join(folder.dir, 'runs', r.key)),
    }));
    const now = computeProvenance(saved.kind, runs, saved.sop.path);
    const v = verifyProvenance(saved, now);
    for (const n of v.notes) err(`note: ${n}\n`);
    if (v.changes.length > 0) {
      err(
        `verify: ${v.changes.length} change${v.changes.length === 1 ? '' : 's'} since ${join(folder.dir, PROVENANCE_FILE)} was written:\n`,
      );
      for (const c of v.changes) err(`  changed: ${c}\n`);
      code = EXIT.failed;
    } else
      err(
        `verify: unchanged (${v.checked} files and run outcomes match ${PROVENANCE_FILE}; Merkle root ${saved.merkle_root.slice(0, 12)})\n`,
      );
  }
  const r = await report(o.dir);
  for (const w of r.warnings) err(`warning: ${w}\n`);
  if (o.json)
    out(
      JSON.stringify(
        { dir: r.folder.dir, results: r.results },
        (_, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v),
        2,
      ) + '\n',
    );
  else out(r.text);
  if (r.written.length > 0) err(`wrote ${r.written.join(', ')}\n`);
  if (o.check) {
    const failed = r.results.filter((x) => x.pass !== true);
    for (const x of failed)
      err(`check: target "${x.name}" ${x.pass === false ? 'missed' : 'not measured'}: ${x.target}${x.note ? ` (${x.note})` : ''}\n`);
    if (failed.length > 0) code = EXIT.failed;
  }
  return code;
}
