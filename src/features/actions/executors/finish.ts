// The `finish` executor: end the current state (and, through next_states["1"] leading to a
// final state, the current SOP) with a result, returned to the caller of a sub-flow.
import { str, type ExecResult, type Executor } from '../../../core/commands/executor.js';

export const executor: Executor = {
  name: 'finish',
  description: 'End the current SOP (or state) with a result.',
  settings: { type: 'object', additionalProperties: false, properties: {} },
  args: () => ({
    result: { type: 'string', required: true, description: 'The outcome, for whoever asked for this work.' },
    summary: { type: 'string', description: "One line on what was done, for the caller's logs." },
  }),
  async run(args): Promise<ExecResult> {
    const result = str(args.result) ?? '';
    const summary = str(args.summary);
    return {
      ok: true,
      result: `Finished: ${result}`,
      summary: `finished: ${summary ?? result}`,
      finish: { result, ...(summary ? { summary } : {}) },
    };
  },
};
