// The commands a state declares, compiled against the executors a run has (each feature
// contributes its own): which executor each runs, with which settings, and which arguments the
// agent must give.
import { EngineError } from '../../shared/errors.js';
import type { Diagnostic } from '../../format/sop/diagnostics.js';
import { pointerOf } from '../../format/sop/json-source.js';
import type { Sop, SopState } from '../../format/sop/types.js';
import type { ArgSpecs, ArgsEnv, Executor } from './executor.js';
import { checkSchema, type MiniSchema, type SchemaProblem } from './mini-schema.js';
import type { ParsedCommand } from '../llm/command-reply.js';

export type SopCommand = NonNullable<SopState['commands']>[string];

/** The executors a command may name, by name. */
export type ExecutorTable = Readonly<Record<string, Executor>>;

/** What commands are compiled with: the executors of the run, and what their arguments depend on. */
export interface CompileEnv extends ArgsEnv {
  executors: ExecutorTable;
}

/** The executors of a list, by name (a later one of the same name wins). */
export function executorTable(list: readonly Executor[]): ExecutorTable {
  return Object.fromEntries(list.map((e) => [e.name, e]));
}

/** The tools a state grants (`tools: ["files/*"]`): a feature makes them commands of the state at its first turn. */
export function grantedTools(state: Pick<SopState, 'tools'>): string[] {
  const t = (state as { tools?: unknown }).tools;
  return Array.isArray(t) ? t.filter((x): x is string => typeof x === 'string') : [];
}

export interface CommandSpec {
  name: string;
  executor: Executor;
  description: string;
  settings: Record<string, unknown>;
  /** Arguments the agent gives (undefined: not known without the SOP file's folder). */
  args: ArgSpecs | undefined;
  /** JSON schema of the arguments object (undefined when the arguments are not known). */
  argsSchema?: MiniSchema;
  /** mcp: the JSON schema of the arguments as the tool declares it (offered as the function's parameters). */
  parameters?: Record<string, unknown>;
}

export class CommandConfigError extends EngineError {
  constructor(
    readonly pointer: string,
    message: string,
  ) {
    super(message, 'COMMAND_CONFIG');
    this.name = 'CommandConfigError';
  }
}

function argsSchema(args: ArgSpecs): MiniSchema {
  const properties: Record<string, MiniSchema> = {};
  for (const [name, a] of Object.entries(args)) properties[name] = a.enum ? { type: a.type, enum: a.enum } : { type: a.type };
  return {
    type: 'object',
    properties,
    required: Object.entries(args)
      .filter(([, a]) => a.required)
      .map(([n]) => n),
    additionalProperties: false,
  };
}

function settingsProblem(e: SchemaProblem): string {
  switch (e.keyword) {
    case 'additionalProperties':
      return `unknown setting "${e.property}"`;
    case 'required':
      return `missing setting "${e.property}"`;
    default:
      return `${e.path ? `settings.${e.path}` : 'settings'} ${e.message}`;
  }
}

/** Compile one command of a state (CommandConfigError with a JSON pointer when it is wrong). */
export function compileCommand(stateName: string, name: string, def: SopCommand, env: CompileEnv): CommandSpec {
  const at = (...rest: string[]) => pointerOf(['states', stateName, 'commands', name, ...rest]);
  const { executors, ...argsEnv } = env;
  const executor = Object.prototype.hasOwnProperty.call(executors, def.executor) ? executors[def.executor] : undefined;
  if (!executor)
    throw new CommandConfigError(
      at('executor'),
      `unknown executor "${def.executor}"; known executors: ${Object.keys(executors).join(', ')}`,
    );
  const settings = (def.settings ?? {}) as Record<string, unknown>;
  const problems = checkSchema(executor.settings, settings);
  if (problems.length > 0) throw new CommandConfigError(at('settings'), `${settingsProblem(problems[0]!)} (executor "${executor.name}")`);
  let args: ArgSpecs | undefined;
  try {
    args = executor.args(settings, argsEnv);
  } catch (err) {
    throw new CommandConfigError(at('settings'), (err as Error).message.split('\n')[0]!);
  }
  if (args && def.args) {
    args = { ...args };
    for (const [arg, description] of Object.entries(def.args)) {
      const known = args[arg];
      if (!known)
        throw new CommandConfigError(
          at('args', arg),
          `"${arg}" is not an argument of this command (arguments: ${Object.keys(args).join(', ') || 'none'})`,
        );
      args[arg] = { ...known, description };
    }
  }
  return {
    name,
    executor,
    settings,
    args,
    description: def.description ?? executor.description,
    argsSchema: args ? argsSchema(args) : undefined,
  };
}

export function compileCommands(stateName: string, state: SopState, env: CompileEnv): Record<string, CommandSpec> {
  const out: Record<string, CommandSpec> = {};
  for (const [name, def] of Object.entries(state.commands ?? {})) out[name] = compileCommand(stateName, name, def, env);
  return out;
}

function argProblem(name: string, spec: CommandSpec, e: SchemaProblem): string {
  const known = Object.keys(spec.args ?? {});
  switch (e.keyword) {
    case 'required':
      return `command "${name}" needs the argument "${e.property}"`;
    case 'additionalProperties':
      return `command "${name}" has no argument "${e.property}" (its arguments: ${known.join(', ') || 'none'})`;
    default:
      return `argument "${e.path}" of command "${name}" ${e.message}`;
  }
}

export type CheckedCommand = { ok: true; spec: CommandSpec; args: Record<string, unknown> } | { ok: false; error: string };

/** Check a parsed command against the state's commands. */
export function checkCommand(parsed: ParsedCommand, specs: Record<string, CommandSpec>): CheckedCommand {
  if (!parsed.ok) return parsed;
  const spec = Object.prototype.hasOwnProperty.call(specs, parsed.command) ? specs[parsed.command] : undefined;
  if (!spec) return { ok: false, error: `unknown command "${parsed.command}"; the commands are: ${Object.keys(specs).join(', ')}` };
  const problems = spec.argsSchema ? checkSchema(spec.argsSchema, parsed.args) : [];
  if (problems.length > 0) {
    return { ok: false, error: [...new Set(problems.map((e) => argProblem(spec.name, spec, e)))].join('; ') };
  }
  return { ok: true, spec, args: parsed.args };
}

/** Checks of the commands of every state, for `sop validate` and loading. */
export function commandDiagnostics(sop: Sop, env: CompileEnv): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const [stateName, state] of Object.entries(sop.states)) {
    const commands = state.commands ?? {};
    const grants = grantedTools(state).length > 0; // granted tools are commands too
    if (Object.keys(commands).length === 0 && !grants) continue;
    if (state.next_states?.['1'] === undefined && !state.final) {
      out.push({
        severity: 'error',
        pointer: pointerOf(['states', stateName, 'next_states']),
        message: `a state with ${grants ? 'tools' : 'commands'} needs next_states["1"]: a finish command and max_turns lead there`,
      });
    }
    for (const [name, def] of Object.entries(commands)) {
      try {
        compileCommand(stateName, name, def, env);
      } catch (err) {
        if (err instanceof CommandConfigError) out.push({ severity: 'error', pointer: err.pointer, message: err.message });
        else throw err;
      }
    }
  }
  return out;
}
