// The commands a state declares, compiled against the executor registry: which executor each
// runs, with which settings, and which arguments the agent must give.
import { EngineError } from '../../shared/errors.js';
import type { Diagnostic } from '../../format/sop/diagnostics.js';
import { pointerOf } from '../../format/sop/json-source.js';
import type { Sop, SopState } from '../../format/sop/types.js';
import { executorNames, getExecutor } from './executors/registry.js';
import type { ArgSpecs, ArgsEnv, Executor } from './executors/types.js';
import { checkSchema, type MiniSchema, type SchemaProblem } from './mini-schema.js';
import type { ParsedCommand } from '../../core/llm/command-reply.js';
// eslint-disable-next-line boundaries/dependencies -- known layer debt (docs/architecture.md): MCP tools become commands here; they part once tools reach the actions through an interface in core
import { stateGrants } from '../mcp/config.js';
// eslint-disable-next-line boundaries/dependencies -- known layer debt (docs/architecture.md): MCP tools become commands here; they part once tools reach the actions through an interface in core
import { mcpDiagnostics } from '../mcp/checks.js';

export type SopCommand = NonNullable<SopState['commands']>[string];

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
export function compileCommand(stateName: string, name: string, def: SopCommand, env: ArgsEnv): CommandSpec {
  const at = (...rest: string[]) => pointerOf(['states', stateName, 'commands', name, ...rest]);
  const executor = getExecutor(def.executor);
  if (!executor)
    throw new CommandConfigError(at('executor'), `unknown executor "${def.executor}"; known executors: ${executorNames().join(', ')}`);
  const settings = (def.settings ?? {}) as Record<string, unknown>;
  const problems = checkSchema(executor.settings as MiniSchema, settings);
  if (problems.length > 0) throw new CommandConfigError(at('settings'), `${settingsProblem(problems[0]!)} (executor "${executor.name}")`);
  let args: ArgSpecs | undefined;
  try {
    args = executor.args(settings, env);
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

export function compileCommands(stateName: string, state: SopState, env: ArgsEnv): Record<string, CommandSpec> {
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
export function commandDiagnostics(sop: Sop, env: ArgsEnv = {}): Diagnostic[] {
  const out: Diagnostic[] = mcpDiagnostics(sop); // mcp: grants name declared servers
  for (const [stateName, state] of Object.entries(sop.states)) {
    const commands = state.commands ?? {};
    const grants = stateGrants(state).length > 0; // mcp: granted tools are commands too
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
