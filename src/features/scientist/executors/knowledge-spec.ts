// What the `knowledge` executor (knowledge.ts) declares: its settings and arguments. Loading a
// SOP needs only this; the knowledge base and embedders are imported at its first call (registry.ts).
import type { ArgSpecs, Executor } from '../../../core/commands/executor.js';

export const knowledgeSpec: Omit<Executor, 'run'> = {
  name: 'knowledge',
  description: 'Search an external knowledge base (a file of questions and answers, or of text chunks) by meaning.',
  settings: {
    type: 'object',
    additionalProperties: false,
    required: ['file'],
    properties: {
      file: {
        type: 'string',
        description:
          'The knowledge base file (Agents 1.0 format); a template (e.g. "{{inputs.knowledge}}"), relative to the folder sop was started from. Empty: the command says no knowledge base was given.',
      },
      mode: {
        type: 'string',
        enum: ['qa', 'chunk'],
        description: 'qa: match questions, return their answers (default); chunk: match text chunks.',
      },
      top_k: { type: 'integer', minimum: 1, maximum: 50, description: 'Entries returned at most (default 3).' },
      threshold: {
        type: 'number',
        description: "Least similarity of an entry returned (default: the knowledge component's for the embedder).",
      },
    },
  },
  args(): ArgSpecs {
    return {
      query: { type: 'string', required: true, description: 'What you want to know.' },
      k: { type: 'integer', description: 'How many entries to return (default: the setting, 3).' },
    };
  },
};
