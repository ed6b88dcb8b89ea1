// What an agent in a command state is told about its commands, and the controller-memory
// window (only the last N messages of the state's current visit).
import type { ComponentPart } from '../../core/agent/components.js';
import type { EnvironmentView } from '../../core/environment/environment.js';
import type { CallMeta, ToolSpec } from '../../core/llm/types.js';
import type { TemplateSet } from '../../core/prompt/templates.js';
import type { CommandSpec } from '../../core/commands/commands.js';

export interface CommandView {
  name: string;
  description: string;
  executor: string;
  args: Array<{ name: string; type: string; description: string; required: boolean; enum?: string[] }>;
  /** mcp: an MCP tool's own JSON schema of its arguments. */
  parameters?: Record<string, unknown>;
}

export function commandViews(specs: Record<string, CommandSpec>): CommandView[] {
  return Object.values(specs).map((s) => ({
    name: s.name,
    description: s.description,
    executor: s.executor.name,
    args: Object.entries(s.args ?? {}).map(([name, a]) => ({
      name,
      type: a.type,
      description: a.description,
      required: a.required === true,
      ...(a.enum ? { enum: a.enum } : {}),
    })),
    ...(s.parameters ? { parameters: s.parameters } : {}),
  }));
}

/** The system-prompt part listing the commands (template `commands`). */
export function commandPart(templates: TemplateSet, commands: CommandView[], context: object): ComponentPart {
  return { kind: 'system', text: templates.render('commands', { ...context, commands }), toolList: true };
}

/** What the LLM provider learns about the commands (the mock uses it to answer validly). */
export function commandMeta(commands: CommandView[]): NonNullable<CallMeta['commands']> {
  return commands.map((c) => ({
    name: c.name,
    executor: c.executor,
    required: c.args.filter((a) => a.required).map((a) => a.name),
    argTypes: Object.fromEntries(c.args.map((a) => [a.name, { type: a.type, ...(a.enum ? { enum: a.enum } : {}) }])),
  }));
}

/** The commands as OpenAI function tools (llm.tool_calls). */
export function commandTools(commands: CommandView[]): ToolSpec[] {
  return commands.map((c) => ({
    name: c.name,
    description: c.description,
    parameters: c.parameters ?? {
      type: 'object',
      properties: Object.fromEntries(
        c.args.map((a) => [a.name, { type: a.type, description: a.description, ...(a.enum ? { enum: a.enum } : {}) }]),
      ),
      required: c.args.filter((a) => a.required).map((a) => a.name),
      additionalProperties: false,
    },
  }));
}

/**
 * Controller memory: keep only the last `memoryWindow` messages of the current visit of the
 * state (the agent's last command and the results since), with no summary and no retrieved
 * history; the memory files in the system prompt carry everything older.
 */
export function limitToVisit(view: EnvironmentView, memoryWindow: number | undefined, stateStart: number): EnvironmentView {
  if (memoryWindow === undefined) return view;
  const visit = view.window.filter((m) => m.id >= stateStart);
  return { window: visit.slice(Math.max(0, visit.length - memoryWindow)), relevant: [], summary: '' };
}
