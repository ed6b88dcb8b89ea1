// Knowledge bases of Agents 1.0 configs: the file's text re-embedded with our embedder, queried
// with what the role just observed, threshold and top_k honoured, vectors cached by file hash
// and embedder id.
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KnowledgeBase } from '../src/core/components/knowledge-base.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { CONFORMANCE, ListHuman, baseConfig, markerEmbedder, runConfig } from './helpers/v1.js';

const CUSTOMER = join(CONFORMANCE, 'Single_Agent/customer_service/customer_knowledge.json');
const MIKE = 'Mike is 180cm tall and 120cm tall. He likes fitness and Go.';
const HUAWEI = 'Huawei mate60pro is developed by Huawei of China';

// Each customer-service run embeds its knowledge base afresh, in a cache folder of its own; the
// variable is put back when the file ends (other files may share this process).
const cacheDirs: string[] = [];
const savedCacheDir = process.env.SOP_CACHE_DIR;
afterAll(() => {
  if (savedCacheDir === undefined) delete process.env.SOP_CACHE_DIR;
  else process.env.SOP_CACHE_DIR = savedCacheDir;
  for (const d of cacheDirs) rmSync(d, { recursive: true, force: true });
});

async function customerService(questions: string[]) {
  process.env.SOP_CACHE_DIR = mkdtempSync(join(tmpdir(), 'sop-kb-cache-'));
  cacheDirs.push(process.env.SOP_CACHE_DIR);
  const { sop } = loadSopFile(CUSTOMER);
  const llm = new ScriptedLlm({ fallback: (r) => `answer at turn ${r.meta.turn}` });
  const res = await new Run({ sop, file: CUSTOMER, llm, maxTurns: 1 + 2 * questions.length, human: new ListHuman(questions) }).run();
  return { res, prompts: llm.of('agent').map((c) => c.last) };
}

describe('KnowledgeBaseComponent (customer_service/customer_knowledge.json)', () => {
  it("puts the matching entry's answer into the prompt for a question close to one in easy_question.json", async () => {
    const { res, prompts } = await customerService(['Tell me who Mike is', 'Can you tell me about the Huawei mate60pro?']);
    expect(res.messages.map((m) => m.sender)).toEqual(['Mike', 'alexander', 'Mike', 'alexander', 'Mike']);
    expect(prompts[0]).toContain(MIKE);
    expect(prompts[0]).not.toContain(HUAWEI);
    expect(prompts[1]).toContain(HUAWEI);
    expect(prompts[1]).not.toContain(MIKE);
  }, 30_000);

  it('says nothing matched for an unrelated question (threshold honoured)', async () => {
    const { prompts } = await customerService(['What will the weather be on Mars tomorrow?']);
    expect(prompts[0]).toMatch(/No matching knowledge/);
    expect(prompts[0]).not.toContain(MIKE);
  });
});

describe('knowledge bases with a test embedder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sop-kb-'));
  const file = join(dir, 'kb.json');
  writeFileSync(
    file,
    JSON.stringify({
      0: { q: 'apple?', a: 'About apples.', chunk: 'apple apple orchard', emb: [[0.1, 0.2]] },
      1: { q: 'apple and banana?', a: 'About both.', chunk: 'apple banana smoothie', emb: [[0.1, 0.2]] },
      2: { q: 'cherry?', a: 'About cherries.', chunk: 'cherry tart', emb: [[0.1, 0.2]] },
      3: { q: 'apple?', a: 'About apples.', chunk: 'apple apple orchard', emb: [[0.3, 0.2]] }, // a repeated pair
    }),
  );

  it('honours top_k and the threshold, and skips repeated entries', async () => {
    const embedder = markerEmbedder();
    const qa = await KnowledgeBase.load({ file, mode: 'qa', embedder, cacheDir: join(dir, 'cache') });
    expect(qa.entries).toHaveLength(3);
    expect((await qa.search('apple please', 5, 0.5)).map((h) => h.a)).toEqual(['About apples.', 'About both.']);
    expect((await qa.search('apple please', 1, 0.5)).map((h) => h.a)).toEqual(['About apples.']);
    expect(await qa.search('lemon please', 5, 0.5)).toEqual([]);
    const chunks = await KnowledgeBase.load({ file, mode: 'chunk', embedder, cacheDir: join(dir, 'cache') });
    expect((await chunks.search('banana', 2, 0.3)).map((h) => h.chunk)).toEqual(['apple banana smoothie']);
  });

  it('caches the vectors by file hash and embedder id', async () => {
    const cacheDir = join(dir, 'cache2');
    let embedded = 0;
    const base = markerEmbedder();
    const counting = {
      ...base,
      id: 'test-markers',
      embed: async (t: string[]) => {
        embedded += t.length;
        return base.embed(t);
      },
    };
    const first = await KnowledgeBase.load({ file, mode: 'qa', embedder: counting, cacheDir });
    expect(first.fromCache).toBe(false);
    expect(embedded).toBe(3);
    const second = await KnowledgeBase.load({ file, mode: 'qa', embedder: counting, cacheDir });
    expect(second.fromCache).toBe(true);
    expect(embedded).toBe(3);
    expect(await second.search('cherry', 1, 0.5)).toEqual(await first.search('cherry', 1, 0.5));
    const other = await KnowledgeBase.load({ file, mode: 'qa', embedder: { ...counting, id: 'another-model' }, cacheDir });
    expect(other.fromCache).toBe(false);
    const copy = join(dir, 'kb-copy.json');
    copyFileSync(file, copy);
    writeFileSync(copy, JSON.stringify({ 0: { q: 'lemon?', a: 'About lemons.', chunk: 'lemon' } }));
    expect((await KnowledgeBase.load({ file: copy, mode: 'qa', embedder: counting, cacheDir })).fromCache).toBe(false);
  });

  it('queries with what the role just observed, in chunk mode with top_k 2', async () => {
    const doc = baseConfig();
    doc.states.s1.roles = ['RB', 'RA'];
    doc.states.s1.agent_states.RA.KnowledgeBaseComponent = { type: 'chunks', top_k: 2, knowledge_path: 'kb.json' };
    const r = await runConfig(
      doc,
      { agent: ['I would love some apple and banana'] },
      {
        maxTurns: 2,
        file: join(dir, 'config.json'),
        agentsV1: { embedder: async () => markerEmbedder(), knowledgeCacheDir: join(dir, 'cache3') },
      },
    );
    const last = r.calls('agent')[1]!.last;
    expect(last).toContain('apple banana smoothie');
    expect(last).toContain('apple apple orchard');
    expect(last).not.toContain('cherry tart');
  });
});
