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
/** Parts of what `validate` imports, timed one by one before the rest (those that exist). */
const VALIDATE_PARTS = [
  'dist/src/sop/sop-validator.generated.js',
  'dist/src/actions/commands.js',
  'dist/src/llm/cassette-check.js',
  'dist/src/import/agents-v1.js',
].filter((p) => existsSync(join(ROOT, p)));
const IMPORTS = ['yargs', 'yargs/helpers', 'dist/src/cli/errors.js', 'dist/src/cli/cli.js', ...VALIDATE_PARTS, VALIDATE];

/** Median time of each import of the CLI's start-up path, in order, over 5 fresh processes. */
function importTimes() {
  const runs = [];
  for (let i = 0; i < 5; i++) {
    const res = spawnSync(process.execPath, [join(ROOT, 'bench', 'workers', 'import-times.mjs'), ...IMPORTS], {
      cwd: ROOT,
      encoding: 'utf8',
    });
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
  const validateTotal = round([...VALIDATE_PARTS, VALIDATE].reduce((a, p) => a + imports[p], 0));
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
    row('  import yargs (median)', fmtMs(imports.yargs)),
    row('  import what validate needs, in all (median)', fmtMs(validateTotal)),
    ...VALIDATE_PARTS.map((p) => row(`    of which ${p.replace('dist/src/', '')}`, fmtMs(imports[p]))),
  ];
  const notes = [];
  if (m.validate >= TARGET_MS || m.help >= TARGET_MS) {
    const heavy = VALIDATE_PARTS.filter((p) => imports[p] > 20).map((p) => `${p.replace('dist/src/', '')} (${Math.round(imports[p])} ms)`);
    notes.push(
      `Start-up misses ${TARGET_MS} ms: Node itself takes ${m.node} ms here, importing yargs ${imports.yargs} ms, and validate ` +
        `imports ${validateTotal} ms of modules${heavy.length ? `, mostly ${heavy.join(', ')}` : ''}. Fix: import those only when the ` +
        'file needs them: the executor registry imports every executor and with them the run loop, Handlebars and the memory code, ' +
        'where checking command arguments needs only names and argument specs; the cassette checker compiles a schema with the ' +
        'full Ajv, needed only for cassette files. `--help` is Node plus yargs, so only a lighter argument parser ' +
        'would bring it down much further.',
    );
  }
  if (sopFile !== jarvis) notes.push(`sops/jarvis.sop.json does not exist yet; validated ${sopFile} instead.`);
  return { title: 'Start-up of the CLI', rows, results: { startup: results }, notes };
}
