// The embedders: local relevance and determinism; transformers on a tiny model built here (real
// tokenizer, ONNX inference and pooling); openai against the local test server; spec parsing.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryEnvironment } from '../src/core/environment/memory-environment.js';
import type { Message } from '../src/core/environment/message.js';
import { createEmbedder, parseEmbedderSpec } from '../src/core/memory/create-embedder.js';
import { EmbedderLoadError } from '../src/core/memory/embedder.js';
import { LocalEmbedder, stem } from '../src/core/memory/local-embedder.js';
import { OpenAiEmbedder } from '../src/core/memory/openai-embedder.js';
import { TransformersEmbedder, missingTransformers } from '../src/core/memory/transformers-embedder.js';
import { fakeEmbedding, startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { buildTinyModel, expectedEmbedding, type TinyModel } from './helpers/tiny-onnx-model.js';

const cos = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

const CHATTER = [
  'I had a great weekend hiking in the mountains with my family.',
  'Has anyone tried the new coffee place downstairs? The espresso is excellent.',
  'We should schedule the team lunch for Friday at noon.',
  'The quarterly marketing report is due next Tuesday.',
  'My laptop battery dies after two hours, I need a replacement.',
  'Let us talk about the holiday party budget and decorations.',
  'The weather forecast says it will rain all week.',
  'Please remember to submit your expense reports before the end of the month.',
  'We are indexing the database tables to speed up the slow queries.',
  'The new intern starts on Monday and will join the design team.',
  'Security review found that passwords were stored without hashing.',
  'Our deployment pipeline failed because the docker image was too large.',
  'The customer complained that invoices arrive twice every month.',
  'Our flight to Lisbon was delayed by three hours yesterday.',
];

/** Rank the chatter for a query, as the environment does: stored message vectors, query vector. */
async function ranking(embedder: LocalEmbedder, query: string): Promise<string[]> {
  const stored = await embedder.embed(CHATTER);
  const [q] = await embedder.embedQuery([query]);
  return CHATTER.map((text, i) => ({ text, s: cos(q!, stored[i]!) }))
    .sort((a, b) => b.s - a.s)
    .map((x) => x.text);
}

describe('local embedder', () => {
  it.each([
    ['Which database indexes do we need?', 'We are indexing the database tables to speed up the slow queries.'],
    ['How should we hash user passwords?', 'Security review found that passwords were stored without hashing.'],
    ['Why did the deploy fail with the container image?', 'Our deployment pipeline failed because the docker image was too large.'],
    ['Was the invoice duplicated for that customer?', 'The customer complained that invoices arrive twice every month.'],
    ['Is the team lunch still scheduled?', 'We should schedule the team lunch for Friday at noon.'],
    ['Any news about delayed flights?', 'Our flight to Lisbon was delayed by three hours yesterday.'],
  ])('"%s" retrieves the related message first', async (query, expected) => {
    const ranked = await ranking(new LocalEmbedder(), query);
    expect(ranked[0]).toBe(expected);
  });

  it('scores the related pair well above unrelated chatter', async () => {
    const e = new LocalEmbedder();
    const stored = await e.embed(CHATTER);
    const [q] = await e.embedQuery(['database indexes']);
    const scores = stored.map((v) => cos(q!, v));
    const related = scores[8]!;
    const others = scores.filter((_, i) => i !== 8);
    expect(related).toBeGreaterThan(0.3);
    expect(related).toBeGreaterThan(2 * Math.max(...others));
  });

  it('is deterministic, unit-length, and the same whether texts come one by one or in a batch', async () => {
    const a = new LocalEmbedder();
    const b = new LocalEmbedder();
    const batch = await a.embed(CHATTER);
    const single: Float32Array[] = [];
    for (const t of CHATTER) single.push(...(await b.embed([t])));
    expect(batch.map((v) => Array.from(v))).toEqual(single.map((v) => Array.from(v)));
    for (const v of batch) expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(a.dimension).toBe(256);
    expect(a.id).toBe('local-v1');
    expect(a.documents).toBe(CHATTER.length);
    await a.embedQuery(['not learned']);
    expect(a.documents).toBe(CHATTER.length);
  });

  it('learns IDF online: a word every message shares weighs less than a rare one', async () => {
    const e = new LocalEmbedder();
    await e.embed(Array.from({ length: 50 }, (_, i) => `project update number ${i} about scheduling`));
    const [rare, common] = await e.embedQuery(['kubernetes', 'project']);
    const [doc] = await e.embedQuery(['project kubernetes']);
    expect(cos(doc!, rare!)).toBeGreaterThan(cos(doc!, common!));
  });

  it('gives empty or stop-word-only texts a zero vector, and folds accents', async () => {
    const e = new LocalEmbedder();
    const [empty, stops, accented, plain] = await e.embed(['', 'the and of it', 'Café résumé', 'cafe resume']);
    expect(Array.from(empty!).every((x) => x === 0)).toBe(true);
    expect(Array.from(stops!).every((x) => x === 0)).toBe(true);
    expect(cos(accented!, plain!)).toBeCloseTo(1, 5);
  });

  it('stems inflections together', () => {
    expect(['indexes', 'indexing', 'indexed', 'index'].map(stem)).toEqual(['index', 'index', 'index', 'index']);
    expect(['databases', 'database'].map(stem)).toEqual(['databas', 'databas']);
    expect(['queries', 'query', 'optimization', 'optimize', 'running', 'run'].map(stem)).toEqual([
      'query',
      'query',
      'optimiz',
      'optimiz',
      'run',
      'run',
    ]);
  });
});

describe('transformers embedder on a tiny model built by the test', () => {
  let model: TinyModel;
  let embedder: TransformersEmbedder;
  beforeAll(async () => {
    model = buildTinyModel(16);
    embedder = await TransformersEmbedder.load(model.dir);
  }, 60_000);
  afterAll(() => rmSync(model.dir, { recursive: true, force: true }));

  it('loads from a folder, tokenises with WordPiece, runs the ONNX graph and mean-pools', async () => {
    expect(embedder.dimension).toBe(16);
    expect(embedder.id).toBe(`transformers:${model.dir}`);
    const texts = ['We are indexing the database tables', 'Which database indexes do we need?', 'rain on the weekend', 'zzz'];
    const vectors = await embedder.embed(texts);
    texts.forEach((t, i) => {
      const expected = expectedEmbedding(model, t);
      expect(vectors[i]!.length).toBe(16);
      for (let j = 0; j < 16; j++) expect(vectors[i]![j]).toBeCloseTo(expected[j]!, 5);
    });
  });

  it('drives retrieval in the environment: the shared word pieces rank first', async () => {
    const env = new MemoryEnvironment({ visibility: 'cooperative', embedder });
    const texts = [
      'coffee on friday',
      'we are hiking in the mountain',
      'the database index is slow',
      'party budget for the team',
      'rain on the weekend',
      'which database indexes do we need',
    ];
    texts.forEach((content, id) => env.add(msg(id, content)));
    const hits = await env.retrieve({ topK: 2 });
    expect(hits[0]!.content).toBe('the database index is slow');
  });

  it('fails clearly for a missing folder, a broken folder and an uncached hub model offline', async () => {
    await expect(TransformersEmbedder.load('./no/such/model')).rejects.toThrow(/model folder .*no\/such\/model does not exist/);
    await expect(TransformersEmbedder.load(process.cwd() + '/test')).rejects.toThrow(/cannot load the model in .*test/);
    await expect(createEmbedder('transformers:sop-tests/not-a-cached-model', { offline: true })).rejects.toThrow(
      /"sop-tests\/not-a-cached-model" is not in the local cache and downloads are off.*a local folder \(transformers:\/path\/to\/model\)/,
    );
  }, 60_000);

  it('without @huggingface/transformers (an optional package), says in one line how to add it', async () => {
    const importer = () =>
      Promise.reject(
        Object.assign(new Error("Cannot find package '@huggingface/transformers' imported from /x.js"), { code: 'ERR_MODULE_NOT_FOUND' }),
      );
    const err = await TransformersEmbedder.load(model.dir, { importer }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmbedderLoadError);
    expect((err as Error).message).toBe(missingTransformers());
    expect(missingTransformers()).toMatch(/^[^\n]+; add it with: npm install -E @huggingface\/transformers@4\.3\.1$/);
    // installed, but a part of it does not load: that part's own error, not the missing-package line
    const broken = () =>
      Promise.reject(
        Object.assign(new Error("Cannot find package 'onnxruntime-node' imported from /y.js"), { code: 'ERR_MODULE_NOT_FOUND' }),
      );
    await expect(TransformersEmbedder.load(model.dir, { importer: broken })).rejects.toThrow(
      /cannot load @huggingface\/transformers \(Cannot find package 'onnxruntime-node'/,
    );
  });
});

describe('openai embedder against the local OpenAI-compatible server', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startOpenAiServer({ embeddingDim: 48 });
  });
  afterAll(async () => {
    await server.close();
  });

  it('sends batches, returns unit vectors in order, and probes its dimension when created', async () => {
    const e = await createEmbedder('openai:text-embedding-3-small', { baseURL: server.url, apiKey: 'test' });
    expect(e.id).toBe('openai:text-embedding-3-small');
    expect(e.dimension).toBe(48);
    const texts = ['database indexes\nplease', 'team lunch', 'rain'];
    const vectors = await e.embed(texts);
    const last = server.requests[server.requests.length - 1]!;
    expect(last.path).toBe('/v1/embeddings');
    expect(last.body).toMatchObject({ model: 'text-embedding-3-small', input: ['database indexes please', 'team lunch', 'rain'] });
    vectors.forEach((v, i) => {
      const expected = fakeEmbedding(texts[i]!.replace(/\n/g, ' '), 48);
      for (let j = 0; j < 48; j++) expect(v[j]).toBeCloseTo(expected[j]!, 5);
    });
  });

  it('splits large inputs into several requests', async () => {
    const e = new OpenAiEmbedder('m', { baseURL: server.url, apiKey: 'test', batchSize: 2 });
    const before = server.requests.length;
    const vectors = await e.embed(['a', 'b', 'c', 'd', 'e']);
    expect(vectors).toHaveLength(5);
    expect(server.requests.length - before).toBe(3);
  });

  it('retries a 503 and reports a refused request clearly', async () => {
    const flaky = await startOpenAiServer({
      fault: (i) => (i === 0 ? { kind: 'status', status: 503, headers: { 'retry-after-ms': '1' } } : undefined),
    });
    const refusing = await startOpenAiServer({ fault: () => ({ kind: 'status', status: 401 }) });
    try {
      const ok = new OpenAiEmbedder('m', { baseURL: flaky.url, apiKey: 'test' });
      expect(await ok.embed(['x'])).toHaveLength(1);
      expect(flaky.requests).toHaveLength(2);
      await expect(createEmbedder('openai:m', { baseURL: refusing.url, apiKey: 'bad' })).rejects.toThrow(
        /openai embedder: embedding call \(openai:m\) failed: HTTP 401/,
      );
    } finally {
      await flaky.close();
      await refusing.close();
    }
  });
});

describe('embedder specs', () => {
  it('parses local, transformers:MODEL and openai:MODEL', () => {
    expect(parseEmbedderSpec(undefined)).toEqual({ kind: 'local' });
    expect(parseEmbedderSpec('local')).toEqual({ kind: 'local' });
    expect(parseEmbedderSpec('transformers:Xenova/all-MiniLM-L6-v2')).toEqual({ kind: 'transformers', model: 'Xenova/all-MiniLM-L6-v2' });
    expect(parseEmbedderSpec('openai:text-embedding-3-small')).toEqual({ kind: 'openai', model: 'text-embedding-3-small' });
  });

  it('rejects unknown kinds and missing models with a usable message', () => {
    expect(() => parseEmbedderSpec('bert')).toThrow(EmbedderLoadError);
    expect(() => parseEmbedderSpec('bert')).toThrow(/unknown embedder "bert"; use local, transformers:MODEL_OR_FOLDER or openai:MODEL/);
    expect(() => parseEmbedderSpec('openai:')).toThrow(/needs a model: openai:text-embedding-3-small/);
    expect(() => parseEmbedderSpec('transformers')).toThrow(/needs a model/);
  });
});

function msg(id: number, content: string): Message {
  return { id, turn: id + 1, state: 's', sender: `A${id % 2}`, role: 'r', content, kind: 'speech', timestamp: '2025-01-01T00:00:00.000Z' };
}
