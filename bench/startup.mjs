// Start-up: wall time of `sop validate sops/jarvis.sop.json` and `sop --help` (the built CLI,
// `node dist/src/cli/main.js`), median of 10 runs each, interleaved; `node -e 0` is measured the
// same way to show what Node itself takes.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/engine.mjs';
import { fmtMs, median, round, row } from './lib/stats.mjs';

export const order = 60;
const RUNS = 10;
const TARGET_MS = 300;

const VALIDATE = 'dist/src/cli/validate-command.js';
const IMPORTS = ['yargs', 'yargs/helpers', 'dist/src/cli/errors.js', 'dist/src/cli/cli.js', VALIDATE];

/** Median time of each import of the CLI's start-up path, in order, over 5 fresh processes. */
function importTimes() {
  const runs = [];
  for (let i = 0; i < 5; i++) {
    const res = spawnSync(process.execPath, [join(ROOT, 'bench', 'workers', 'import-times.mjs'), ...IMPORTS], { cwd: ROOT, encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`import timing failed: ${res.stderr.slice(-1000)}`);
    runs.push(JSON.parse(res.stdout));
  }
  return Object.fromEntries(IMPORTS.map((k) => [k, round(median(runs.map((r) => r[k])))]));
}

function time(args) {
  const started = performance.now();
  const res = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (res.status !== 0) throw new Error(`node ${args.join(' ')} failed (exit ${res.status}): ${(res.stderr || res.stdout).slice(-1000)}`);
  return ms;
}

export async function run() {
  const cli = join('dist', 'src', 'cli', 'main.js');
  const jarvis = join('sops', 'jarvis.sop.json');
  const sopFile = existsSync(join(ROOT, jarvis)) ? jarvis : join('examples', 'debate', 'debate.sop.json');
  const commands = {
    validate: [cli, 'validate', sopFile],
    help: [cli, '--help'],
    node: ['-e', '0'],
  };
  const samples = { validate: [], help: [], node: [] };
  for (const args of Object.values(commands)) time(args); // warm the file cache
  for (let i = 0; i < RUNS; i++) for (const [k, args] of Object.entries(commands)) samples[k].push(time(args));
  const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, round(median(v))]));
  const imports = importTimes();
  const results = {
    runs: RUNS,
    validate_file: sopFile,
    validate_ms: m.validate,
    help_ms: m.help,
    node_baseline_ms: m.node,
    import_ms_median: imports,
    target_ms: TARGET_MS,
  };
  const rows = [
    row(`Start-up: sop validate ${sopFile} (median of ${RUNS})`, fmtMs(m.validate), `< ${TARGET_MS} ms`, m.validate < TARGET_MS),
    row(`Start-up: sop --help (median of ${RUNS})`, fmtMs(m.help), `< ${TARGET_MS} ms`, m.help < TARGET_MS),
    row('  node -e 0 on this machine (median)', fmtMs(m.node)),
    row('  import yargs / the validate command\'s modules (median)', `${fmtMs(imports.yargs)} / ${fmtMs(imports[VALIDATE])}`),
  ];
  const notes = [];
  if (sopFile !== jarvis) notes.push(`sops/jarvis.sop.json does not exist yet; validated ${sopFile} instead.`);
  return { title: 'Start-up of the CLI', rows, results: { startup: results }, notes };
}
