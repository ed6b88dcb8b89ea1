// Memory: throughput of the `local` embedder, top-5 retrieval latency over 1k, 10k and 100k
// stored messages, and the bytes each stored message costs. Messages are synthetic English-like
// chat lines (12 to 40 words, a 420-word vocabulary plus function words), generated from a fixed
// seed, so every run measures the same texts. See bench/README.md, "Memory".
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './lib/engine.mjs';
import { fmtMs, median, p95, round, row } from './lib/stats.mjs';

export const order = 40;

const EMBED_TARGET = 20_000; // messages per second
const RETRIEVAL_TARGET_MS = 10; // median at 100k messages
const SIZES = [1_000, 10_000, 100_000];
const QUERIES = 300;
const WINDOW = 10; // the recent window excluded from retrieval, as in a real prompt

const CONTENT = (
  'database index query table schema migration cache latency throughput server client request response timeout retry ' +
  'deploy release pipeline build test coverage bug fix patch review merge branch commit feature flag rollout rollback ' +
  'budget cost price invoice customer contract deadline meeting agenda minutes decision proposal estimate risk plan ' +
  'roadmap quarter goal metric dashboard alert incident outage postmortem monitor log trace error warning memory cpu disk ' +
  'network bandwidth packet router firewall security password token secret certificate encryption hash audit compliance ' +
  'policy privacy user account login session cookie browser mobile app screen button layout design color font image ' +
  'video audio file upload download storage bucket backup restore archive document report spreadsheet chart summary ' +
  'analysis model training dataset label accuracy precision recall experiment hypothesis result evidence sample survey ' +
  'interview feedback complaint support ticket escalation priority severity owner team manager engineer designer analyst ' +
  'intern hiring candidate offer salary bonus holiday vacation weekend lunch coffee office remote travel flight hotel ' +
  'train car bike weather rain snow sun forecast temperature city street park river mountain beach garden kitchen recipe ' +
  'dinner breakfast market shop order delivery shipping warehouse inventory supplier vendor partner contract negotiation ' +
  'legal lawyer court judge debate motion argument rebuttal opening closing verdict vote election policy tax law bill ' +
  'school student teacher lesson exam grade homework library book chapter author story novel poem music song concert ' +
  'movie actor stage theatre game player score match season league coach training injury doctor patient hospital ' +
  'medicine symptom treatment vaccine health diet exercise sleep stress energy battery charger laptop keyboard monitor ' +
  'printer phone camera sensor robot drone engine motor fuel electric solar wind power grid price demand supply growth ' +
  'inflation interest loan bank payment card transfer fraud scam phishing email inbox calendar schedule reminder task ' +
  'checklist milestone sprint standup retrospective backlog estimate velocity refactor rewrite legacy module function ' +
  'variable parameter argument interface protocol endpoint payload json yaml config environment container cluster node ' +
  'queue worker scheduler cron job batch stream event listener handler callback promise thread lock mutex deadlock race ' +
  'slow fast faster cheaper safer simpler broken stable flaky missing duplicate expensive urgent important optional ' +
  'improve reduce increase measure compare explain propose approve reject postpone cancel investigate reproduce ' +
  'indexing optimizing caching scaling sharding replicating migrating testing deploying reviewing debugging profiling'
).split(/\s+/);
const FUNCTION_WORDS =
  'the a an of to in on for with we you i it is are was be this that our they should can will not and but or so if when'.split(' ');

function makeRng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** `count` deterministic chat lines. */
export function syntheticMessages(count, seed = 42) {
  const rnd = makeRng(seed);
  const out = new Array(count);
  for (let i = 0; i < count; i++) {
    const words = 12 + Math.floor(rnd() * 29);
    const topic = Math.floor(rnd() * CONTENT.length); // lines stay near a topic, as chats do
    const parts = [];
    for (let w = 0; w < words; w++) {
      if (rnd() < 0.4) parts.push(FUNCTION_WORDS[Math.floor(rnd() * FUNCTION_WORDS.length)]);
      else parts.push(CONTENT[(topic + Math.floor(rnd() * rnd() * 60)) % CONTENT.length]);
    }
    out[i] = parts.join(' ') + (rnd() < 0.3 ? '?' : '.');
  }
  return out;
}

/** JS heap in use after a full GC (typed-array and WebAssembly buffers live outside it). */
function heap() {
  globalThis.gc?.();
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
}

export async function run() {
  const { LocalEmbedder, VectorStore, MemoryEnvironment } = await import('sop/extend');
  const big = SIZES[SIZES.length - 1];
  const texts = syntheticMessages(big);

  // 1. Bytes per stored message: a whole environment (message objects with their own copy of
  // the text, embeddings, per-agent records) measured on the heap, before anything else is held.
  const before = heap();
  let env = new MemoryEnvironment({ visibility: 'cooperative', embedder: new LocalEmbedder() });
  const agents = ['Ann', 'Ben', 'Cat', 'Dev', 'Eve'];
  const stamp = new Date().toISOString();
  for (let i = 0; i < big; i++) {
    await env.add({
      id: i,
      turn: i + 1,
      state: 'chat',
      sender: agents[i % 5],
      role: 'Speaker',
      content: Buffer.from(texts[i]).toString(),
      kind: 'speech',
      timestamp: stamp,
    });
  }
  await env.flush();
  const heapBytes = (heap() - before) / big;
  const bufferBytes = env.vectorBytes / big; // embedding buffers, including their spare capacity
  const envBytes = heapBytes + bufferBytes;
  const envRetrieve = [];
  for (let q = 0; q < 50; q++) {
    const started = performance.now();
    await env.retrieve({ topK: 5, before: big - WINDOW });
    if (q >= 5) envRetrieve.push(performance.now() - started);
  }

  // eslint-disable-next-line no-useless-assignment -- drops the last reference, so heap() sees it freed
  env = undefined;
  heap();

  // 2. Embedding throughput: one message at a time, learning IDF as a run does.
  const warm = new LocalEmbedder();
  for (let i = 0; i < 3000; i++) warm.embedOne(texts[i]);
  const embedder = new LocalEmbedder();
  const rows = new Array(texts.length);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i++) rows[i] = embedder.embedOne(texts[i]);
  const embedSeconds = (performance.now() - t0) / 1000;
  const cpu1 = process.cpuUsage(cpu0);
  const perSecond = texts.length / embedSeconds;
  const perCpuSecond = texts.length / ((cpu1.user + cpu1.system) / 1e6);
  const avgChars = texts.reduce((a, t) => a + t.length, 0) / texts.length;

  // 3. Retrieval latency: top-5 over all stored rows but the recent window.
  const store = new VectorStore(embedder.dimension);
  const exactStore = new VectorStore(embedder.dimension, { simd: false });
  const latency = {};
  const rnd = makeRng(7);
  let mismatches = 0;
  let filled = 0;
  for (const size of SIZES) {
    for (; filled < size; filled++) {
      store.add(rows[filled]);
      exactStore.add(rows[filled]);
    }
    const times = [];
    const cpuTimes = [];
    for (let q = 0; q < QUERIES + 20; q++) {
      const query = rows[Math.floor(rnd() * size)];
      const opts = { exclude: { from: size - WINDOW, to: size } };
      const cpu = process.cpuUsage();
      const started = performance.now();
      const hits = store.search(query, 5, opts);
      const ms = performance.now() - started;
      const used = process.cpuUsage(cpu);
      if (q >= 20) {
        times.push(ms);
        cpuTimes.push((used.user + used.system) / 1000);
      } // the first queries warm the JIT up
      if (q % 30 === 0) {
        const ref = store.searchExact(query, 5, opts);
        if (JSON.stringify(hits.map((h) => h.row)) !== JSON.stringify(ref.map((h) => h.row))) mismatches++;
      }
    }
    latency[size] = { median_ms: round(median(times), 3), p95_ms: round(p95(times), 3), cpu_median_ms: round(median(cpuTimes), 3) };
  }
  // The same search with the plain JS scan (no SIMD), and brute force over the Float32 rows.
  const jsTimes = [];
  const bruteTimes = [];
  for (let q = 0; q < 12; q++) {
    const query = rows[Math.floor(rnd() * big)];
    let started = performance.now();
    exactStore.search(query, 5, {});
    if (q >= 2) jsTimes.push(performance.now() - started);
    started = performance.now();
    store.searchExact(query, 5, {});
    if (q >= 2) bruteTimes.push(performance.now() - started);
  }

  // 4. Retrieval quality: recall@5 (and @1) on the labelled paraphrases of a run's history
  // (test/fixtures/retrieval/paraphrases.json), the lexical embedder beside a real one: all-MiniLM-L6-v2
  // through `transformers:`, when .ci/run (scripts/fetch-test-model.mjs) has put it in .cache/models.
  const { recallAtK, PARAPHRASES } = await import('./lib/recall.mjs');
  const { createEmbedder } = await import('sop/extend');
  const quality = (e) => Promise.all([recallAtK(e, 5), recallAtK(e, 1)]).then(([at5, at1]) => ({ id: e.id, at5, at1 }));
  const lexical = await quality(new LocalEmbedder());
  const realFolder = join(ROOT, '.cache', 'models', 'all-MiniLM-L6-v2');
  const real = existsSync(join(realFolder, 'onnx', 'model.onnx'))
    ? await quality(await createEmbedder(`transformers:${realFolder}`, {}))
    : undefined;
  const recallOf = (q) => ({
    embedder: q.id.replace(`${ROOT}/`, ''),
    recall_at_5: round(q.at5.recall, 3),
    recall_at_1: round(q.at1.recall, 3),
    missed_at_5: q.at5.misses,
  });

  const vectorBytes = store.bytesPerRow;
  const results = {
    memory: {
      messages: 'synthetic chat lines, 12-40 words, seed 42',
      avg_chars_per_message: round(avgChars, 1),
      embedder: embedder.id,
      dimension: embedder.dimension,
      embed_messages_per_second: Math.round(perSecond),
      embed_messages_per_cpu_second: Math.round(perCpuSecond),
      embed_target_per_second: EMBED_TARGET,
      simd: store.simd,
      retrieval_top5: latency,
      retrieval_target_median_ms_at_100k: RETRIEVAL_TARGET_MS,
      retrieval_top5_100k_js_scan_median_ms: round(median(jsTimes), 2),
      retrieval_top5_100k_brute_force_float32_median_ms: round(median(bruteTimes), 2),
      retrieval_top5_100k_environment_median_ms: round(median(envRetrieve), 2),
      results_differing_from_brute_force: mismatches,
      bytes_per_message_vectors_note: 'Float32 row + int8 row + float32 scale',
      bytes_per_message_vectors: vectorBytes,
      bytes_per_message_environment: Math.round(envBytes),
      bytes_per_message_environment_heap: Math.round(heapBytes),
      bytes_per_message_environment_buffers: Math.round(bufferBytes),
      retrieval_quality: {
        set: `test/fixtures/retrieval/paraphrases.json: ${PARAPHRASES.queries.length} paraphrased queries over ${PARAPHRASES.history.length} messages`,
        lexical: recallOf(lexical),
        real: real ? recallOf(real) : null,
        ...(real
          ? {}
          : { real_note: 'all-MiniLM-L6-v2 is not in .cache/models (bash .ci/run or node scripts/fetch-test-model.mjs fetches it)' }),
      },
    },
  };
  const r = results.memory;
  const embedPass = r.embed_messages_per_second > EMBED_TARGET;
  const retrievalPass = latency[big].median_ms < RETRIEVAL_TARGET_MS;
  const table = [
    row(
      `local embedder throughput (${r.dimension}-d, ${Math.round(avgChars)} chars/message)`,
      `${r.embed_messages_per_second.toLocaleString('en-US')} msg/s`,
      `> ${EMBED_TARGET.toLocaleString('en-US')}/s`,
      embedPass,
    ),
    row('  per second of CPU time (what an idle machine gives)', `${r.embed_messages_per_cpu_second.toLocaleString('en-US')} msg/s`),
    ...SIZES.map((n) =>
      row(
        `top-5 retrieval, ${n.toLocaleString('en-US')} messages: median / p95`,
        `${fmtMs(latency[n].median_ms)} / ${fmtMs(latency[n].p95_ms)}`,
        n === big ? `< ${RETRIEVAL_TARGET_MS} ms median` : '',
        n === big ? retrievalPass : undefined,
      ),
    ),
    row('  100k, CPU time per query (median; what an idle machine gives)', fmtMs(latency[big].cpu_median_ms)),
    row(
      `  100k, same search without SIMD / brute-force Float32`,
      `${fmtMs(r.retrieval_top5_100k_js_scan_median_ms)} / ${fmtMs(r.retrieval_top5_100k_brute_force_float32_median_ms)}`,
    ),
    row('  100k, through the environment (incl. repeat filtering)', fmtMs(r.retrieval_top5_100k_environment_median_ms)),
    row('  results differing from brute force', String(mismatches), '0', mismatches === 0),
    row('bytes per stored message: embedding (Float32 + int8 + scale)', `${vectorBytes.toLocaleString('en-US')} B`),
    row(
      'bytes per stored message: whole environment (text, metadata, embedding)',
      `${r.bytes_per_message_environment.toLocaleString('en-US')} B`,
    ),
    row(
      '  of which JS heap (message objects, text, indexes) / embedding buffers with spare capacity',
      `${r.bytes_per_message_environment_heap.toLocaleString('en-US')} B / ${r.bytes_per_message_environment_buffers.toLocaleString('en-US')} B`,
    ),
    row(
      `recall@5 (@1), ${PARAPHRASES.queries.length} paraphrased queries: lexical (local) / real (all-MiniLM-L6-v2)`,
      `${round(lexical.at5.recall, 2)} (${round(lexical.at1.recall, 2)}) / ${real ? `${round(real.at5.recall, 2)} (${round(real.at1.recall, 2)})` : 'absent'}`,
    ),
  ];
  const notes = [];
  if (!real) notes.push(r.retrieval_quality.real_note);
  if (!store.simd) notes.push('WebAssembly SIMD is not available here; retrieval used the JS scan.');
  if (!embedPass)
    notes.push(
      `local embedder below target: ${r.embed_messages_per_second} msg/s of wall time, ${r.embed_messages_per_cpu_second} per CPU second; the gap is other load on the machine (it embeds one message at a time on one thread).`,
    );
  if (!retrievalPass)
    notes.push(
      `retrieval median at 100k is ${latency[big].median_ms} ms; the int8 scan reads ${Math.round((big * (vectorBytes - 4 - r.dimension * 4)) / 1e6)} MB per query, bounded by memory bandwidth on a loaded machine.`,
    );
  return {
    title: 'Memory: local embedder, retrieval, bytes per message, recall of the lexical and a real embedder',
    rows: table,
    results,
    notes,
  };
}
