// The `knowledge` executor: an external knowledge base the agent consults as an instrument
// (seed 003's knowledge_base test method). The file is a knowledge base in the Agents 1.0 format
// ({"0": {"q", "a"} or {"chunk"}, ...}, as the knowledge component reads it), searched by meaning
// with the run's embedder.
import { defaultThreshold } from '../../../core/components/knowledge.js';
import { embedderLearns, KnowledgeBase, KnowledgeError, type KnowledgeMode } from '../../../core/components/knowledge-base.js';
import { createEmbedder } from '../../../core/memory/create-embedder.js';
import { isAbsolute, resolve } from 'node:path';
import { ExecutorInputError, str, type ExecContext, type ExecResult, type Executor } from '../../../core/commands/executor.js';
import { knowledgeSpec } from './knowledge-spec.js';

const loaded = new Map<string, Promise<KnowledgeBase>>();

async function load(file: string, mode: KnowledgeMode, ctx: ExecContext): Promise<KnowledgeBase> {
  const key = `${file}\u0000${mode}`;
  let kb = loaded.get(key);
  if (!kb) {
    kb = (async () => {
      const run = ctx.embedder ? await ctx.embedder() : await createEmbedder(ctx.sop?.environment?.embedder);
      // an embedder that learns from what it embeds gets its own instance per knowledge base
      const embedder = embedderLearns(run) ? await createEmbedder(ctx.sop?.environment?.embedder) : run;
      return KnowledgeBase.load({ file, mode, embedder });
    })();
    loaded.set(key, kb);
    kb.catch(() => loaded.delete(key));
  }
  return kb;
}

export const executor: Executor = {
  ...knowledgeSpec,
  async run(args, ctx): Promise<ExecResult> {
    const given = ctx.renderText(str(ctx.settings.file) ?? '', `commands/${ctx.command}/settings/file`).trim();
    if (given === '') throw new ExecutorInputError('no knowledge base was given to this run (e.g. --input knowledge=FILE)');
    const file = isAbsolute(given) ? given : resolve(ctx.launchDir, given);
    const mode: KnowledgeMode = ctx.settings.mode === 'chunk' ? 'chunk' : 'qa';
    const query = str(args.query)?.trim() ?? '';
    if (query === '') throw new ExecutorInputError('the query is empty');
    let kb: KnowledgeBase;
    try {
      kb = await load(file, mode, ctx);
    } catch (err) {
      if (err instanceof KnowledgeError) throw new ExecutorInputError(err.message);
      throw err;
    }
    const k = typeof args.k === 'number' ? args.k : typeof ctx.settings.top_k === 'number' ? ctx.settings.top_k : 3;
    const threshold = typeof ctx.settings.threshold === 'number' ? ctx.settings.threshold : defaultThreshold(mode, kb.embedderId);
    const hits = await kb.search(query, Math.max(1, Math.min(50, k)), threshold);
    const lines = hits.map((h) =>
      mode === 'qa' ? `- (${h.score.toFixed(2)}) Q: ${h.q}\n  A: ${h.a}` : `- (${h.score.toFixed(2)}) ${h.chunk}`,
    );
    return {
      ok: true,
      result: hits.length
        ? `The knowledge base says (closest first):\n${lines.join('\n')}`
        : `The knowledge base has nothing close to "${query}".`,
      summary: `consulted the knowledge base ("${query.slice(0, 80)}"): ${hits.length} found`,
    };
  },
};
