// The environment memory: window and retrieval never overlap, the visibility rule bounds both,
// repeats are skipped, per-agent memory, background embedding and its failures.
import { describe, expect, it } from 'vitest';
import { MemoryEnvironment } from '../src/core/environment/memory-environment.js';
import type { Message } from '../src/core/environment/message.js';
import type { Embedder } from '../src/core/memory/embedder.js';
import { LocalEmbedder } from '../src/core/memory/local-embedder.js';

let nextId = 0;
function fill(env: MemoryEnvironment, lines: Array<[sender: string, content: string, state?: string]>): Message[] {
  const out: Message[] = [];
  for (const [sender, content, state] of lines) {
    const m: Message = {
      id: env.messages.length,
      turn: env.messages.length + 1,
      state: state ?? 's',
      sender,
      role: sender.toLowerCase(),
      content,
      kind: 'speech',
      timestamp: new Date(nextId++).toISOString(),
    };
    void env.add(m);
    out.push(m);
  }
  return out;
}

const TALK: Array<[string, string]> = [
  ['Ann', 'We are indexing the database tables to speed up the slow queries.'],
  ['Ben', 'The weather forecast says it will rain all week.'],
  ['Cat', 'Has anyone tried the new coffee place downstairs?'],
  ['Ann', 'The quarterly marketing report is due next Tuesday.'],
  ['Ben', 'Let us talk about the holiday party budget.'],
  ['Cat', 'My laptop battery dies after two hours.'],
  ['Ann', 'We should schedule the team lunch for Friday.'],
  ['Ben', 'Which database indexes do we still need?'],
];

describe('memory environment', () => {
  it('retrieves relevant earlier messages outside the window, most similar first', async () => {
    const env = new MemoryEnvironment({ visibility: 'cooperative', embedder: new LocalEmbedder() });
    fill(env, TALK);
    const view = await env.view({ agent: 'Cat', window: 3, topK: 2 });
    expect(view.window.map((m) => m.id)).toEqual([5, 6, 7]);
    expect(view.relevant[0]!.content).toBe(TALK[0]![1]);
    expect(view.relevant).toHaveLength(2);
    for (const m of view.relevant) expect(m.id).toBeLessThan(5);
    // With a high minimum similarity only the related message is left.
    const strict = await env.view({ agent: 'Cat', window: 3, topK: 3, minSimilarity: 0.2 });
    expect(strict.relevant.map((m) => m.id)).toEqual([0]);
    // A query text instead of the last message.
    const byText = await env.retrieve({ topK: 1, query: 'holiday party', before: 8 });
    expect(byText[0]!.id).toBe(4);
  });

  it('competitive: a message from a previous state is neither in the window nor retrieved', async () => {
    const env = new MemoryEnvironment({ visibility: 'competitive', embedder: new LocalEmbedder() });
    fill(env, [['Ann', 'Our secret plan: indexing the database tables before the demo.', 'prep']]);
    env.stateStart = env.messages.length;
    fill(
      env,
      TALK.slice(1).map(([s, c]) => [s, c, 'debate'] as [string, string, string]),
    );
    const view = await env.view({ agent: 'Cat', window: 3, topK: 10 });
    const seen = [...view.window, ...view.relevant];
    expect(seen.some((m) => m.state === 'prep')).toBe(false);
    expect(view.relevant.map((m) => m.id).sort()).toEqual([1, 2, 3, 4]);
    expect(await env.retrieve({ topK: 5, query: 'secret plan for indexing the database' })).not.toContainEqual(
      expect.objectContaining({ state: 'prep' }),
    );
    expect(env.visible().map((m) => m.state)).not.toContain('prep');
    expect(env.memoryOf('Cat').heard.some((m) => m.state === 'prep')).toBe(false);
  });

  it('cooperative: the same message from a previous state is retrieved', async () => {
    const env = new MemoryEnvironment({ visibility: 'cooperative', embedder: new LocalEmbedder() });
    fill(env, [['Ann', 'Our secret plan: indexing the database tables before the demo.', 'prep']]);
    env.stateStart = env.messages.length;
    fill(
      env,
      TALK.slice(1).map(([s, c]) => [s, c, 'debate'] as [string, string, string]),
    );
    const view = await env.view({ agent: 'Cat', window: 3, topK: 1 });
    expect(view.relevant.map((m) => m.state)).toEqual(['prep']);
    expect(env.memoryOf('Cat').heard.map((m) => m.id)).toContain(0);
  });

  it('skips texts already in the window and repeated texts', async () => {
    const env = new MemoryEnvironment({ visibility: 'cooperative', embedder: new LocalEmbedder() });
    fill(env, [
      ['Ann', 'Walk me through the database index change.'],
      ['Ann', 'Walk me through the database index change.'],
      ['Ben', 'We add an index on the orders database table.'],
      ['Cat', 'Lunch is at noon.'],
      ['Ann', 'Walk me through the database index change.'],
      ['Ben', 'Tell me about the database index change.'],
    ]);
    const view = await env.view({ window: 2, topK: 3 });
    const texts = view.relevant.map((m) => m.content);
    expect(texts).not.toContain('Walk me through the database index change.');
    expect(new Set(texts).size).toBe(texts.length);
    expect(texts[0]).toBe('We add an index on the orders database table.');
  });

  it('keeps what each agent said and heard', async () => {
    const env = new MemoryEnvironment({ visibility: 'cooperative', embedder: new LocalEmbedder() });
    fill(env, TALK);
    await env.view({ agent: 'Cat', window: 2, topK: 1 });
    const cat = env.memoryOf('Cat');
    expect(cat.said.map((m) => m.id)).toEqual([2, 5]);
    expect(cat.heard.map((m) => m.id).sort()).toEqual([0, 6, 7]);
    expect(env.memoryOf('Nobody')).toEqual({ said: [], heard: [] });
  });

  it('embeds in the background in order, creates the embedder once, and keeps vectors per message', async () => {
    let created = 0;
    const calls: string[][] = [];
    const local = new LocalEmbedder();
    const slow: Embedder = {
      id: 'slow',
      dimension: local.dimension,
      async embed(texts) {
        calls.push(texts);
        await new Promise((r) => setTimeout(r, 5));
        return local.embed(texts);
      },
    };
    const env = new MemoryEnvironment({
      visibility: 'cooperative',
      embedder: async () => {
        created++;
        return slow;
      },
    });
    fill(env, TALK);
    await env.flush();
    expect(created).toBe(1);
    expect(calls.flat()).toEqual(TALK.map(([, c]) => c)); // in order, each once
    expect(calls.length).toBeLessThan(TALK.length); // batched while the embedder was busy
    expect(env.embeddingOf(0)).toHaveLength(256);
    expect(env.embedderId).toBe('slow');
    const ref = new LocalEmbedder();
    const [v0] = await ref.embed([TALK[0]![1]]);
    expect(Array.from(env.embeddingOf(0)!)).toEqual(Array.from(v0!));
  });

  it('without an embedder embeds nothing and retrieves nothing', async () => {
    const env = new MemoryEnvironment({ visibility: 'cooperative' });
    fill(env, TALK);
    const view = await env.view({ window: 2, topK: 3 });
    expect(view.relevant).toEqual([]);
    expect(env.embeddingOf(0)).toBeUndefined();
    expect(env.embeds).toBe(false);
  });

  it('surfaces an embedding failure at the next retrieval', async () => {
    const broken: Embedder = {
      id: 'broken',
      dimension: 4,
      async embed() {
        throw new Error('embedding server unreachable');
      },
    };
    const env = new MemoryEnvironment({ visibility: 'cooperative', embedder: broken });
    fill(env, TALK.slice(0, 3));
    await expect(env.view({ window: 1, topK: 1 })).rejects.toThrow('embedding server unreachable');
    await expect(env.flush()).rejects.toThrow('embedding server unreachable');
  });

  it('rejects a message whose id is not its position', async () => {
    const env = new MemoryEnvironment({ visibility: 'cooperative' });
    await expect(
      env.add({ id: 3, turn: 1, state: 's', sender: 'A', role: 'r', content: 'x', kind: 'speech', timestamp: '' }),
    ).rejects.toThrow(/id 3 does not match its position 0/);
  });
});
