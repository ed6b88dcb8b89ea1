// An executor whose declaration (name, description, settings, arguments) is known up front, and
// whose work is imported at its first call. Loading and validating a SOP compiles every command
// against the declarations only, so `sop validate` does not load what the executor works with.
import type { ExecContext, ExecResult, Executor } from './executor.js';

export function lazyExecutor(spec: Omit<Executor, 'run'>, load: () => Promise<{ executor: Executor }>): Executor {
  return {
    ...spec,
    async run(args: Record<string, unknown>, ctx: ExecContext): Promise<ExecResult> {
      return (await load()).executor.run(args, ctx);
    },
  };
}
