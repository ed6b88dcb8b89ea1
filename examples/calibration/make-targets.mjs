// Makes the target of cascade.sop.json: runs the model at the true values (TRUTH below) over 40
// seeds and writes the mean number of adopters after each step into its "adopters_curve" target.
// Run it from the repository after `npm run build`: node examples/calibration/make-targets.mjs
import { readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSop } from '../../dist/src/index.js';

const TRUTH = { theta: 0.42, p: 0.2 };
const SEEDS = 40;
const file = new URL('./cascade.sop.json', import.meta.url).pathname;
const doc = JSON.parse(readFileSync(file, 'utf8'));
const sop = structuredClone(doc);
sop.states.cascade.activation.probability = TRUTH.p; // the value the "p" parameter sets (its path)
delete sop.targets;
delete sop.calibrate;
const out = mkdtempSync(join(tmpdir(), 'cascade-targets-'));
const sums = new Map();
try {
  for (let seed = 1; seed <= SEEDS; seed++) {
    const handle = runSop(sop, { file, llm: 'mock', seed, inputs: { theta: String(TRUTH.theta) }, out, stream: false });
    for await (const e of handle) if (e.type === 'population_step') sums.set(e.step, (sums.get(e.step) ?? 0) + e.metrics.adopters);
    const r = await handle.result;
    if (r.status !== 'finished') throw new Error(`seed ${seed}: ${r.status}`);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
const points = [...sums.entries()].sort((a, b) => a[0] - b[0]).map(([step, sum]) => [step, Number((sum / SEEDS).toFixed(3))]);
doc.targets.adopters_curve.points = points;
doc.targets.adopters_curve.source = `made by make-targets.mjs: the mean of ${SEEDS} runs at theta=${TRUTH.theta}, p=${TRUTH.p}`;
writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
console.log(points.map(([s, v]) => `${s}:${v}`).join(' '));
