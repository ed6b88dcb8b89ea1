// npm run bench -- rules: the rule tier against Mesa, and steps whose cost does not grow with the run.
//   1. The ZI-C market of 10,000 traders over 100 steps (Gode and Sunder 1993): sop (the `market`
//      world, the `zic` rule tier: bench/lib/zic-sop.mjs) and the same model in Mesa
//      (bench/workers/zic_mesa.py, through python3 when `import mesa` works), each in its own
//      process, alternated (sop, Mesa, sop, Mesa); agent-steps per CPU-second of each side's best
//      run, and their ratio (`rules.vs_mesa`, target >= 1). sop once more with its journal.
//   2. 100,000 agents of the `social` world, 10% active, a rule tier (`cascade`), a run folder, 52
//      steps: the CPU of step 50 over that of step 5 (`rules.step_growth`, the medians of steps
//      48-52 and 3-7, target <= 1.2), the journal's bytes per applied action
//      (`rules.journal_bytes_per_action`, target <= 200) and peak RSS.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const order = 75;

const here = dirname(fileURLToPath(import.meta.url));
const TRADERS = 10_000;
const STEPS = 100;

function child(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed: ${(r.stderr || r.stdout || '').trim().split('\n').slice(-3).join(' ')}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1));
}

const sopRun = (...args) => child(process.execPath, [join(here, 'workers/rules-sop.mjs'), ...args.map(String)]);
const mesaRun = (seed) => child('python3', [join(here, 'workers/zic_mesa.py'), String(TRADERS), String(STEPS), String(seed)]);
const rate = (r) => r.agent_steps / r.cpu_s;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x, d = 0) => Math.round(x * 10 ** d) / 10 ** d;

function mesaVersion() {
  const r = spawnSync('python3', ['-c', 'import mesa; print(mesa.__version__)'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

export async function run() {
  const rows = [];
  const results = {};
  const notes = [];
  // 1. sop against Mesa
  const mesa = mesaVersion();
  const sops = [];
  const mesas = [];
  for (let round = 0; round < 2; round++) {
    sops.push(sopRun('zic', TRADERS, STEPS));
    if (mesa) mesas.push(mesaRun(round + 1));
  }
  const journaled = sopRun('zic', TRADERS, STEPS, 'journal');
  const sopRate = Math.max(...sops.map(rate));
  results.zic_traders = TRADERS;
  results.zic_steps = STEPS;
  results.sop_agent_steps_per_cpu_s = round(sopRate);
  results.sop_agent_steps_per_cpu_s_runs = sops.map((r) => round(rate(r)));
  results.sop_agent_steps_per_cpu_s_journal = round(rate(journaled));
  results.sop_efficiency = round(sops[0].efficiency, 4);
  rows.push({
    figure: `ZI-C, ${TRADERS.toLocaleString('en')} traders x ${STEPS} steps: sop agent-steps/CPU-s`,
    value: results.sop_agent_steps_per_cpu_s,
    target: '',
    status: '',
  });
  rows.push({ figure: '  sop with its journal (a run folder)', value: results.sop_agent_steps_per_cpu_s_journal, target: '', status: '' });
  if (mesa) {
    const mesaRate = Math.max(...mesas.map(rate));
    results.mesa_version = mesa;
    results.mesa_agent_steps_per_cpu_s = round(mesaRate);
    results.mesa_agent_steps_per_cpu_s_runs = mesas.map((r) => round(rate(r)));
    results.mesa_efficiency = round(mesas[0].efficiency, 4);
    results.vs_mesa = round(sopRate / mesaRate, 3);
    rows.push({ figure: `  Mesa ${mesa} agent-steps/CPU-s`, value: results.mesa_agent_steps_per_cpu_s, target: '', status: '' });
    rows.push({ figure: '  sop / Mesa', value: results.vs_mesa, target: '>= 1.0', status: results.vs_mesa >= 1 ? 'pass' : 'MISS' });
    rows.push({
      figure: '  allocative efficiency, sop / Mesa',
      value: `${results.sop_efficiency} / ${results.mesa_efficiency}`,
      target: '',
      status: '',
    });
  } else {
    results.vs_mesa = null;
    notes.push('Mesa comparison skipped: `python3 -c "import mesa"` fails here (pip install mesa).');
  }
  // 2. 100,000 social agents with a rule tier and a run folder
  const social = sopRun('social', 100_000, 52, 0.1);
  const early = median(social.step_cpu_ms.slice(2, 7));
  const late = median(social.step_cpu_ms.slice(47, 52));
  results.step_growth = round(late / early, 3);
  results.step_cpu_ms_5 = round(early, 1);
  results.step_cpu_ms_50 = round(late, 1);
  results.journal_bytes_per_action = round(social.journal_bytes / social.actions, 1);
  results.journal_bytes = social.journal_bytes;
  results.social_peak_rss_mb = social.peak_rss_mb;
  results.heap_mb_step_5 = median(social.step_heap_mb.slice(2, 7));
  results.heap_mb_step_50 = median(social.step_heap_mb.slice(47, 52));
  rows.push({
    figure: '100,000 social agents, 10% active, rule tier, run folder: CPU ms of step 5',
    value: results.step_cpu_ms_5,
    target: '',
    status: '',
  });
  rows.push({ figure: '  CPU ms of step 50', value: results.step_cpu_ms_50, target: '', status: '' });
  rows.push({
    figure: '  step 50 / step 5',
    value: results.step_growth,
    target: '<= 1.2',
    status: results.step_growth <= 1.2 ? 'pass' : 'MISS',
  });
  rows.push({
    figure: '  journal bytes per applied action',
    value: results.journal_bytes_per_action,
    target: '<= 200',
    status: results.journal_bytes_per_action <= 200 ? 'pass' : 'MISS',
  });
  rows.push({
    figure: '  heap used at step 5 / step 50, MB',
    value: `${results.heap_mb_step_5} / ${results.heap_mb_step_50}`,
    target: '',
    status: '',
  });
  rows.push({
    figure: '  peak RSS, MB (with the results database built at the end)',
    value: results.social_peak_rss_mb,
    target: '',
    status: '',
  });
  notes.push(
    "CPU seconds are the process's own (user + system) from the run's start to its end, module loading and the SOP's validation left out on both sides.",
  );
  notes.push("Each side runs in its own process, alternated; each figure is the best of its side's runs.");
  return { title: 'Rule tier: sop against Mesa; step cost over a run', rows, results: { rules: results }, notes };
}
