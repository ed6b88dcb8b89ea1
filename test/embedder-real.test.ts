// Real sentence embeddings in tests (issue 28 item 7): all-MiniLM-L6-v2 (ONNX, int8) put together
// by .ci/run from two PyPI wheels (test/fixtures/models/minilm.json), run by the `transformers:`
// embedder from its folder, with no network. Against the lexical `local` embedder on the labelled
// paraphrases of a run's history (test/fixtures/retrieval/paraphrases.json): recall@5 and @1.
// Skips, saying why, when the folder is absent.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LocalEmbedder } from '../src/core/memory/local-embedder.js';
import { createEmbedder } from '../src/core/memory/create-embedder.js';
import { recallAtK } from '../bench/lib/recall.mjs';

const FOLDER = join(process.cwd(), '.cache', 'models', 'all-MiniLM-L6-v2');
const missing = existsSync(join(FOLDER, 'onnx', 'model.onnx'))
  ? undefined
  : `${FOLDER} is absent (bash .ci/run, or node scripts/fetch-test-model.mjs, puts it together)`;
if (missing) console.warn(`real embedder tests: skipped: ${missing}`);

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe.skipIf(missing !== undefined)('all-MiniLM-L6-v2 through the transformers: embedder', () => {
  it('loads from its folder with no network, and places synonyms together', async () => {
    const e = await createEmbedder(`transformers:${FOLDER}`, {});
    expect(e.dimension).toBe(384);
    const [cat, feline, markets] = await e.embed([
      'The cat sits on the mat.',
      'A feline is resting on a rug.',
      'Stock markets fell sharply today.',
    ]);
    expect(dot(cat!, feline!)).toBeGreaterThan(0.4);
    expect(dot(cat!, markets!)).toBeLessThan(0.2);
    // the lexical embedder shares no word between the first two: it cannot tell
    const lexical = new LocalEmbedder();
    const [c, f] = await lexical.embed(['The cat sits on the mat.', 'A feline is resting on a rug.']);
    expect(dot(c!, f!)).toBeLessThan(dot(cat!, feline!));
  }, 60_000);

  it('finds the paraphrased messages the lexical embedder misses: recall@5 and @1', async () => {
    const real = await createEmbedder(`transformers:${FOLDER}`, {});
    const [real5, real1, lex5, lex1] = await Promise.all([
      recallAtK(real, 5),
      recallAtK(real, 1),
      recallAtK(new LocalEmbedder(), 5),
      recallAtK(new LocalEmbedder(), 1),
    ]);
    console.log(
      `recall@5: lexical ${lex5.recall.toFixed(2)}, all-MiniLM-L6-v2 ${real5.recall.toFixed(2)}; recall@1: ${lex1.recall.toFixed(2)}, ${real1.recall.toFixed(2)}`,
    );
    expect(real5.recall).toBeGreaterThanOrEqual(0.9);
    expect(real5.recall).toBeGreaterThan(lex5.recall);
    expect(real1.recall).toBeGreaterThan(lex1.recall);
  }, 60_000);
});
