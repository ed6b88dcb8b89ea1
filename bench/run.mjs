#!/usr/bin/env node
// npm run bench [-- NAME ...]: runs the bench modules in bench/ one after another, each in its
// own Node process (so memory figures and JIT state do not leak between them), prints their
// tables and merges their results into bench/results.json.
//
// A bench module is any bench/*.mjs other than this file that exports
//   async function run(): { title, rows: [{ figure, value, target, status }], results: {...}, notes?: string[] }
// (`status` is 'pass', 'MISS' or ''). `results` keys are merged into results.json, so each module
// owns its own keys. An optional `export const order = N` sorts modules (default 100, then name).
// The child processes run with --expose-gc, so a module may call globalThis.gc() before measuring memory.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const resultsFile = join(here, 'results.json');

async function child(name, out) {
  const mod = await import(pathToFileURL(join(here, `${name}.mjs`)).href);
  const started = performance.now();
  const res = await mod.run();
  res.seconds = Math.round((performance.now() - started) / 100) / 10;
  writeFileSync(out, JSON.stringify(res));
}

async function modules() {
  const found = [];
  for (const file of readdirSync(here)
    .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs')
    .sort()) {
    const text = readFileSync(join(here, file), 'utf8');
    if (!/export\s+async\s+function\s+run\s*\(/.test(text)) continue;
    const order = Number(/export\s+const\s+order\s*=\s*(\d+)/.exec(text)?.[1] ?? 100);
    found.push({ name: basename(file, '.mjs'), order });
  }
  return found.sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
}

function table(rows) {
  const head = { figure: 'Figure', value: 'Value', target: 'Target', status: '' };
  const all = [head, ...rows];
  const w = (k) => Math.max(...all.map((r) => String(r[k] ?? '').length));
  const [a, b, c] = [w('figure'), w('value'), w('target')];
  const line = (r) =>
    `  ${String(r.figure).padEnd(a)}  ${String(r.value).padStart(b)}  ${String(r.target ?? '').padEnd(c)}  ${r.status ?? ''}`.trimEnd();
  return [line(head), `  ${'-'.repeat(a)}  ${'-'.repeat(b)}  ${'-'.repeat(c)}`, ...rows.map(line)].join('\n');
}

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === '--child') return child(argv[1], argv[2]);
  // `--name value` options (e.g. --max-concurrency 5) are passed on to every module's process.
  const options = [];
  const args = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i].startsWith('--')) options.push(argv[i], ...(argv[i + 1] !== undefined && !argv[i + 1].startsWith('--') ? [argv[++i]] : []));
    else args.push(argv[i]);
  }
  const all = await modules();
  const unknown = args.filter((a) => !all.some((m) => m.name === a));
  if (unknown.length) {
    process.stderr.write(`unknown bench module(s): ${unknown.join(', ')}; available: ${all.map((m) => m.name).join(', ')}\n`);
    process.exitCode = 2;
    return;
  }
  const chosen = args.length ? all.filter((m) => args.includes(m.name)) : all;
  const results = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, 'utf8')) : {};
  const tmp = mkdtempSync(join(tmpdir(), 'sop-bench-'));
  let failed = 0;
  let missed = 0;
  const summary = [];
  process.stdout.write(
    `sop benchmarks on ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, load average ${loadavg()[0].toFixed(2)}\n`,
  );
  try {
    for (const { name } of chosen) {
      process.stdout.write(`\n== ${name} ==\n`);
      const out = join(tmp, `${name}.json`);
      const r = spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), '--child', name, out, ...options], {
        stdio: ['ignore', 'inherit', 'inherit'],
      });
      if (r.status !== 0 || !existsSync(out)) {
        failed++;
        process.stdout.write(`  FAILED (exit ${r.status ?? r.signal})\n`);
        continue;
      }
      const res = JSON.parse(readFileSync(out, 'utf8'));
      process.stdout.write(`${res.title} (${res.seconds} s)\n${table(res.rows ?? [])}\n`);
      for (const note of res.notes ?? []) process.stdout.write(`  note: ${note}\n`);
      missed += (res.rows ?? []).filter((row) => row.status === 'MISS').length;
      summary.push(...(res.rows ?? []));
      Object.assign(results, res.results ?? {});
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  if (chosen.length > 1) process.stdout.write(`\n== summary: every figure ==\n${table(summary)}\n`);
  results.machine = {
    cpus: cpus().length,
    cpu: cpus()[0]?.model,
    memory_gib: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    load_average_at_end: Math.round(loadavg()[0] * 100) / 100,
    time: new Date().toISOString(),
  };
  writeFileSync(resultsFile, JSON.stringify(results, null, 2) + '\n');
  process.stdout.write(
    `\nResults written to bench/results.json${missed ? `; ${missed} target(s) missed (see notes)` : ''}${failed ? `; ${failed} module(s) failed` : ''}.\n`,
  );
  if (failed) process.exitCode = 1;
}

await main();
