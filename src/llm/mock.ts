// The `mock` provider: deterministic, offline placeholder replies for dry runs of any SOP.
// Agents get a labelled placeholder line, judges answer so the graph advances, speaker choice
// rotates through the candidates, summaries count messages. Nothing here pretends to be a model.
import { estimateUsage, type ChatOptions, type ChatRequest, type ChatResponse, type LlmProvider } from './types.js';

/** Turns a state lasts under the mock judge (unless its max_turns is smaller). */
export const MOCK_TURNS_PER_STATE = 3;

export class MockProvider implements LlmProvider {
  readonly id = 'mock';
  private calls = 0;

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    this.calls++;
    const content = this.reply(request);
    if (request.stream) options.onDelta?.(content);
    return { content, usage: estimateUsage(request.messages, content), model: 'mock' };
  }

  private reply({ meta }: ChatRequest): string {
    const tag = meta.extractWord ?? 'end';
    switch (meta.purpose) {
      case 'judge': {
        // Stay for a few turns so a dry run shows the state's rotation, then move on.
        const keys = meta.judgeKeys ?? ['0'];
        const advance = keys.includes('1') ? '1' : keys.find((k) => k !== '0') ?? '0';
        return `<${tag}>${(meta.turnInState ?? 0) >= MOCK_TURNS_PER_STATE ? advance : '0'}</${tag}>`;
      }
      case 'speaker': {
        const candidates = meta.candidates ?? [];
        const pick = candidates.length ? candidates[meta.turn % candidates.length] : '';
        return `<${tag}>${pick}</${tag}>`;
      }
      case 'summary':
        return `[mock summary] The conversation in state ${meta.state} has reached turn ${meta.turn}.`;
      default:
        if (meta.commands?.length) return mockCommand(meta.commands, `${meta.agent ?? 'agent'} (${meta.role ?? 'role'}) in ${meta.state}, turn ${meta.turn}`);
        return `[mock] ${meta.agent ?? 'agent'} (${meta.role ?? 'role'}) speaks in ${meta.state}, turn ${meta.turn}.`;
    }
  }
}

/**
 * In a state with commands the mock answers with a valid command: `finish` when the state has
 * one (so a dry run moves on), else the first command that runs no code, with placeholder
 * values of each required argument's type.
 */
export function mockCommand(commands: NonNullable<ChatRequest['meta']['commands']>, who: string): string {
  const pick = commands.find((c) => c.executor === 'finish') ?? commands.find((c) => c.executor !== 'code') ?? commands[0]!;
  const args: Record<string, unknown> = {};
  for (const name of pick.required) args[name] = placeholder(name, pick.argTypes?.[name], who);
  return JSON.stringify({ command: pick.name, command_args: args });
}

function placeholder(name: string, spec: { type: string; enum?: string[] } | undefined, who: string): unknown {
  if (spec?.enum?.length) return spec.enum[0];
  switch (spec?.type) {
    case 'integer': case 'number': return 1;
    case 'boolean': return true;
    case 'array': return [];
    case 'object': return {};
    default: return `[mock] ${name} from ${who}`;
  }
}
