// The settings of the scientist's executors that work on a memory file of their kind with an
// `op` (task_board, world_model): the op, the file, and the state to finish to.

/** The JSON schema of such an executor's settings; `more` adds the settings of its own. */
export function opSettings(kind: string, ops: readonly string[], more: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'object',
    additionalProperties: false,
    required: ['op'],
    properties: {
      op: { type: 'string', enum: [...ops] },
      file: { type: 'string', minLength: 1, description: `The ${kind} memory file (default: the SOP's only one).` },
      finish: { type: 'string', description: 'After the command succeeds, end the state and take next_states[finish] (e.g. "1").' },
      ...more,
    },
  };
}
