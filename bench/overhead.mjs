// Engine overhead per turn: the 5-agent, 3-state debate fixture, 2,000 turns with the `mock`
// LLM (zero latency) and the default environment (local embedder, top-3 retrieval, summaries),
// journal on. A turn is the time between two consecutive `message` events; the time spent inside
// the LLM provider and inside the embedder is subtracted and reported apart.
import fs, { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { FIXTURES, TimedProvider, loadEngine, tempRuns } from './lib/engine.mjs';
import { fmtUs, mean, median, p95, round, row } from './lib/stats.mjs';

export const order = 10;
export const TURNS = 2000;
const WARMUP_TURNS = 300;
const TARGET_US = 500;

let runCount = 0;

/** One measured run; returns per-turn samples in microseconds. */
export async function measureRun(engine, { sop, file, turns, journalDir }) {
  const { Run, MockProvider, RunFolder, makeRedactor } = engine;
  const llm = new TimedProvider(new MockProvider({ walk: false })); // the debate loops (its "1" goes back) for 2,000 turns
  const folder = journalDir ? new RunFolder(journalDir, `bench-${++runCount}`, makeRedactor()) : undefined;
  const events = [];
  const samples = { turnUs: [], overheadUs: [], embedUs: [], journalUs: [], llmUs: [] };
  let journalMs = 0;
  let last = 0;
  let lastLlm = 0;
  let lastEmbed = 0;
  let lastJournal = 0;
  let run;
  const clock = (event) => {
    if (event.type !== 'message') return;
    const now = performance.now();
    const embedMs = run.env.embedMs ?? 0;
    const turn = now - last;
    const llmMs = llm.ms - lastLlm;
    const emb = embedMs - lastEmbed;
    samples.turnUs.push(turn * 1000);
    samples.llmUs.push(llmMs * 1000);
    samples.embedUs.push(emb * 1000);
    samples.journalUs.push((journalMs - lastJournal) * 1000);
    samples.overheadUs.push((turn - llmMs - emb) * 1000);
    last = now;
    lastLlm = llm.ms;
    lastEmbed = embedMs;
    lastJournal = journalMs;
  };
  const journal = folder
    ? (event) => {
        const t = performance.now();
        folder.onEvent(event);
        journalMs += performance.now() - t;
      }
    : (event) => {
        if (event.type !== 'delta') events.push(event);
      };
  run = new Run({ sop, file, llm, maxTurns: turns, listeners: [clock, journal], runId: 'bench' });
  const started = performance.now();
  last = started;
  const result = await run.run();
  const totalMs = performance.now() - started;
  folder?.close?.();
  if (result.status === 'failed') throw new Error(`bench run failed: ${result.error?.message}`);
  if (result.turns !== turns) throw new Error(`bench run stopped after ${result.turns} of ${turns} turns (${result.status})`);
  return { samples, totalMs, llmMs: llm.ms, llmCalls: llm.calls, embedMs: run.env.embedMs ?? 0, embedderId: run.env.embedderId };
}

/**
 * Run `fn` with fsync turned into a no-op for every module (the journal writes each line as usual
 * but never waits for the disk): the bound group commit would approach.
 */
async function withoutFsync(fn) {
  const original = fs.fsyncSync;
  fs.fsyncSync = () => {};
  syncBuiltinESMExports();
  try {
    return await fn();
  } finally {
    fs.fsyncSync = original;
    syncBuiltinESMExports();
  }
}

/** Median time of one fsync after a 1 KB append, in µs, in `dir` (what the journal pays per turn). */
function fsyncProbe(dir) {
  const fd = openSync(join(dir, 'fsync-probe'), 'a');
  const us = [];
  try {
    for (let i = 0; i < 50; i++) {
      writeSync(fd, `${'x'.repeat(1023)}\n`);
      const t = performance.now();
      fsyncSync(fd);
      us.push((performance.now() - t) * 1000);
    }
  } finally {
    closeSync(fd);
  }
  return { median: round(median(us)), p95: round(p95(us)) };
}

export async function run() {
  const engine = await loadEngine();
  const file = join(FIXTURES, 'debate5.sop.json');
  const { sop } = engine.loadSopFile(file);
  const runs = tempRuns('overhead');
  try {
    await measureRun(engine, { sop, file, turns: WARMUP_TURNS, journalDir: runs.dir });
    const on = await measureRun(engine, { sop, file, turns: TURNS, journalDir: runs.dir });
    const off = await measureRun(engine, { sop, file, turns: TURNS });
    const noSync = await withoutFsync(() => measureRun(engine, { sop, file, turns: TURNS, journalDir: runs.dir }));
    const fsync = fsyncProbe(runs.dir);
    const s = on.samples;
    const withEmbed = s.overheadUs.map((x, i) => x + s.embedUs[i]);
    const results = {
      fixture: 'bench/fixtures/debate5.sop.json',
      turns: TURNS,
      warmup_turns: WARMUP_TURNS,
      llm: 'mock',
      embedder: on.embedderId ?? 'none',
      llm_calls: on.llmCalls,
      overhead_us: { median: round(median(s.overheadUs)), p95: round(p95(s.overheadUs)), mean: round(mean(s.overheadUs)) },
      overhead_with_embedding_us: { median: round(median(withEmbed)), p95: round(p95(withEmbed)) },
      embedding_us: { median: round(median(s.embedUs)), p95: round(p95(s.embedUs)), mean: round(mean(s.embedUs)) },
      journal_us: { median: round(median(s.journalUs)), p95: round(p95(s.journalUs)) },
      llm_us: { median: round(median(s.llmUs)) },
      fsync_1kb_append_us: fsync,
      overhead_journal_without_fsync_us: { median: round(median(noSync.samples.overheadUs)), p95: round(p95(noSync.samples.overheadUs)) },
      overhead_journal_off_us: { median: round(median(off.samples.overheadUs)), p95: round(p95(off.samples.overheadUs)) },
      total_ms: round(on.totalMs),
      target_median_us: TARGET_US,
    };
    const pass = results.overhead_us.median < TARGET_US;
    const rows = [
      row('Engine overhead/turn, median (excl. LLM, embedding; journal on)', fmtUs(results.overhead_us.median), `< ${TARGET_US} µs`, pass),
      row('Engine overhead/turn, p95', fmtUs(results.overhead_us.p95)),
      row('  of which journal writes + fsync (median)', fmtUs(results.journal_us.median)),
      row("  same, journal written but not fsync'ed (median)", fmtUs(results.overhead_journal_without_fsync_us.median)),
      row('  same, journal off (median)', fmtUs(results.overhead_journal_off_us.median)),
      row('  one fsync of a 1 KB append on this disk (median)', fmtUs(fsync.median)),
      row(`Embedding/turn, median (${results.embedder})`, fmtUs(results.embedding_us.median)),
      row('Overhead + embedding/turn, median', fmtUs(results.overhead_with_embedding_us.median)),
    ];
    const notes = [];
    const r = results;
    if (!pass && r.overhead_journal_off_us.median < TARGET_US) {
      notes.push(
        `Overhead/turn misses ${TARGET_US} µs because of the journal. The engine alone takes ${r.overhead_journal_off_us.median} µs; ` +
          `with the journal it takes ${r.overhead_us.median} µs, of which ${r.journal_us.median} µs are spent in the run folder's listener ` +
          '(each event serialised, redacted and written; the transcript files stay open, and the turn-boundary fsync runs in the ' +
          `background, group-commit style; a bare fsync of a 1 KB append takes ${fsync.median} µs median here). The rest of the gap is ` +
          'indirect (allocation and GC of the serialised lines, cold caches after the write syscalls) and swings with load: compare ' +
          'the "without fsync" row, which is often no lower. What would fix it: batching the lines of a turn into one write at the ' +
          'checkpoint (kill-safety then holds per turn rather than per event), and cheaper serialisation of llm_call events ' +
          '(they carry the whole reply). With a real LLM (0.5 to 10 s per call) the journal is well under 1% of a turn.',
      );
    } else if (!pass) {
      notes.push(
        `Overhead/turn misses ${TARGET_US} µs even without the journal (${r.overhead_journal_off_us.median} µs): ` +
          'profile with `node --cpu-prof bench/workers/turns-ours.mjs 2000` or the overhead module to see which step dominates.',
      );
    }
    return {
      title: 'Engine overhead per turn (2,000 turns, mock LLM, local embedder, journal on)',
      rows,
      results: { overhead: results },
      notes,
    };
  } finally {
    runs.remove();
  }
}
