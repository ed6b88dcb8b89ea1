// Side by side with LangGraph.js: the same 2,000-turn round-robin conversation, run by this engine
// (bench/workers/turns-ours.mjs) and as a LangGraph StateGraph with MemorySaver
// (bench/workers/turns-langgraph.mjs). Each run is its own child process, so each side's peak RSS
// is its own; the order alternates (ours, LangGraph, ours, LangGraph) so drift of the machine
// (other load, thermal) hits both sides alike.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/engine.mjs';
import { fmtMB, fmtUs, mean, round, row } from './lib/stats.mjs';
import { TURNS } from './overhead.mjs';

export const order = 20;
const PAIRS = 2;
/** No second pair once the first took this long. */
const BUDGET_MS = 150_000;
const TARGET_RATIO = 3;

function child(script, args) {
  const res = spawnSync(process.execPath, [join(ROOT, 'bench', 'workers', script), String(TURNS), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 24,
    env: { ...process.env, LANGSMITH_TRACING: 'false', LANGCHAIN_TRACING_V2: 'false' },
  });
  if (res.status !== 0) throw new Error(`${script} failed (exit ${res.status}): ${(res.stderr || res.stdout).slice(-2000)}`);
  return JSON.parse(res.stdout.trim().split('\n').pop());
}

export async function run() {
  const ours = [];
  const theirs = [];
  const oursJournal = [];
  const started = performance.now();
  const sequence = [];
  let skipped = false;
  for (let i = 0; i < PAIRS; i++) {
    // Keep `npm run bench` under 10 minutes: on a loaded machine one pair is all there is time for.
    if (i > 0 && performance.now() - started > BUDGET_MS) {
      skipped = true;
      break;
    }
    ours.push(child('turns-ours.mjs', []));
    sequence.push('ours');
    if (i === 0) {
      oursJournal.push(child('turns-ours.mjs', ['--journal']));
      sequence.push('ours+journal');
    }
    theirs.push(child('turns-langgraph.mjs', []));
    sequence.push('langgraph');
  }
  const side = (runs) => ({
    runs: runs.map((r) => ({
      median_us: round(r.median_us),
      p95_us: round(r.p95_us),
      first200_median_us: round(r.first200_median_us),
      last200_median_us: round(r.last200_median_us),
      total_ms: round(r.total_ms),
      peak_rss_mb: round(r.peak_rss_kb / 1024),
    })),
    median_us: round(mean(runs.map((r) => r.median_us))),
    p95_us: round(mean(runs.map((r) => r.p95_us))),
    first200_median_us: round(mean(runs.map((r) => r.first200_median_us))),
    total_ms: round(mean(runs.map((r) => r.total_ms))),
    peak_rss_mb: round(Math.max(...runs.map((r) => r.peak_rss_kb)) / 1024),
  });
  const a = side(ours);
  const b = side(theirs);
  const j = side(oursJournal);
  const ratio = b.median_us / a.median_us;
  const ratioFirst = b.first200_median_us / a.first200_median_us;
  const results = {
    turns: TURNS,
    order: sequence,
    versions: langGraphVersions(),
    ours: a,
    ours_with_journal: j,
    langgraph: b,
    ratio_langgraph_over_ours: round(ratio, 1),
    ratio_ours_over_langgraph: round(1 / ratio, 4),
    ratio_first_200_turns: round(ratioFirst, 1),
    target_ratio: TARGET_RATIO,
  };
  const pass = ratio >= TARGET_RATIO;
  const rows = [
    row('Round-robin overhead/turn, ours (median; in-memory events)', fmtUs(a.median_us)),
    row('Round-robin overhead/turn, LangGraph.js + MemorySaver (median)', fmtUs(b.median_us)),
    row('Per-turn overhead, LangGraph / ours', `${round(ratio, 1)}x (ours/theirs ${round(1 / ratio, 3)})`, `>= ${TARGET_RATIO}x`, pass),
    row('  same, first 200 turns only', `${round(ratioFirst, 1)}x`),
    row('  ours with the disk journal (median)', fmtUs(j.median_us)),
    row('Peak RSS, ours / LangGraph.js (2,000 turns)', `${fmtMB(a.peak_rss_mb * 1024)} / ${fmtMB(b.peak_rss_mb * 1024)}`),
  ];
  const notes = [];
  if (skipped)
    notes.push(
      `The first pair took ${Math.round((performance.now() - started) / 1000)} s, so the second was skipped to keep the bench under 10 minutes (machine loaded?).`,
    );
  if (!pass) {
    notes.push(
      `LangGraph ratio target missed: ${round(ratio, 1)}x. Profile the ours side with ` +
        '`node --cpu-prof bench/workers/turns-ours.mjs 2000` to see which step of the turn dominates.',
    );
  }
  return { title: 'Side by side with LangGraph.js (2,000-turn round robin, 5 speakers)', rows, results: { langgraph: results }, notes };
}

function langGraphVersions() {
  const out = {};
  for (const p of ['@langchain/langgraph', '@langchain/core']) {
    try {
      out[p] = JSON.parse(readFileSync(join(ROOT, 'node_modules', p, 'package.json'), 'utf8')).version;
    } catch {
      out[p] = 'unknown';
    }
  }
  return out;
}
