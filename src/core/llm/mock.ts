// The `mock` provider: deterministic, offline placeholder replies for dry runs of any SOP.
// Agents get a labelled placeholder line, judges and command states walk the graph to a final
// state (see `chooseRoute`), speaker choice rotates through the candidates, summaries count
// messages. Nothing here pretends to be a model.
import { estimateUsage } from './types.js';
import type { CallMeta, ChatOptions, ChatRequest, ChatResponse, LlmProvider, WalkInfo } from './types.js';
import { fmix32, fnv1a } from '../../shared/util/hash.js';

/** Turns a state lasts under the mock judge (unless its max_turns is smaller). */
export const MOCK_TURNS_PER_STATE = 3;

export interface MockOptions {
  /**
   * Walk the graph to a final state (default). `false`: the judge always moves on by key "1"
   * after a few turns and command states finish at once, so a SOP whose "1" loops keeps
   * looping (the benchmarks' long runs).
   */
  walk?: boolean;
}

export class MockProvider implements LlmProvider {
  readonly id = 'mock';
  private calls = 0;

  constructor(private readonly options: MockOptions = {}) {}

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    options.signal?.throwIfAborted(); // an abandoned call gives no reply
    this.calls++;
    const content = this.reply(request);
    if (request.stream) options.onDelta?.(content);
    return { content, usage: estimateUsage(request.messages, content), model: 'mock' };
  }

  private reply({ meta: given }: ChatRequest): string {
    const meta = this.options.walk === false ? { ...given, walk: undefined } : given;
    const tag = meta.extractWord ?? 'end';
    switch (meta.purpose) {
      case 'judge':
        // a population step's judge: every contested action, in the order given
        if (meta.population) return JSON.stringify({ order: (meta.candidates ?? []).map(Number), reason: '[mock] in the order given' });
        return `<${tag}>${judgeKey(meta)}</${tag}>`;
      case 'speaker': {
        const candidates = meta.candidates ?? [];
        const pick = candidates.length ? candidates[meta.turn % candidates.length] : '';
        return `<${tag}>${pick}</${tag}>`;
      }
      case 'summary':
        return `[mock summary] The conversation in state ${meta.state} has reached turn ${meta.turn}.`;
      default:
        if (meta.population && meta.commands?.length) return mockAction(meta.commands, meta);
        if (meta.commands?.length)
          return mockCommand(meta.commands, `${meta.agent ?? 'agent'} (${meta.role ?? 'role'}) in ${meta.state}, turn ${meta.turn}`, meta);
        return `[mock] ${meta.agent ?? 'agent'} (${meta.role ?? 'role'}) speaks in ${meta.state}, turn ${meta.turn}.`;
    }
  }
}

type Route = WalkInfo['routes'][number];

/**
 * The walk of a dry run: where to go from a state, given its ways out. Ways that cannot reach a
 * final state are never taken (unless there is no other); ways to a state not visited yet come
 * first, the first of them chosen by the seed (so a few seeds try every key), then the ways
 * closest to a final state. `attempt` moves along that list when an earlier choice did not
 * move the run (a refused command). Taking a fresh state first visits each state at most once
 * that way, and once every way out was visited each step gets closer to a final state, so the
 * walk ends in one.
 */
export function chooseRoute<T extends Pick<Route, 'steps' | 'visits'>>(ways: T[], seed: number, attempt = 0): T | undefined {
  const onward = ways.filter((w) => w.steps >= 0);
  if (onward.length === 0) return ways[attempt % Math.max(1, ways.length)];
  const fresh = onward.filter((w) => w.visits === 0);
  const start = fresh.length > 0 ? mod(seed - 1, fresh.length) : 0;
  const rest = onward.filter((w) => w.visits > 0).sort((a, b) => a.steps - b.steps);
  const list = [...fresh.slice(start), ...fresh.slice(0, start), ...rest];
  return list[attempt % list.length];
}

function mod(a: number, n: number): number {
  return ((a % n) + n) % n;
}

/**
 * The judge stays a few turns (so a dry run shows the state's rotation; fewer when max_turns
 * would move on first), then answers the key of the walk's next state.
 */
export function judgeKey(meta: CallMeta): string {
  const keys = meta.judgeKeys ?? ['0'];
  const walk = meta.walk;
  const stay = Math.min(MOCK_TURNS_PER_STATE, walk?.maxTurns !== undefined ? Math.max(0, walk.maxTurns - 1) : MOCK_TURNS_PER_STATE);
  if ((meta.turnInState ?? 0) < stay) return '0';
  const ways = walk?.routes.filter((r) => r.target !== meta.state && keys.includes(r.key)) ?? [];
  const way = walk ? chooseRoute(ways, walk.seed) : undefined;
  if (way) return way.key;
  return keys.includes('1') ? '1' : (keys.find((k) => k !== '0') ?? '0');
}

/**
 * In a state with commands the mock answers with a valid command. With the walk: first each
 * sub-flow (`sop`) command once, in order (so a dry run reaches the sub-SOPs), then a command
 * that ends the state towards the walk's next state (finish, an accepted review, a command with
 * `settings.finish`), another one at each later turn if it was refused. Otherwise `finish` when
 * the state has one, else the first command that runs no code. Arguments get placeholder values
 * of their types.
 */
export function mockCommand(commands: NonNullable<ChatRequest['meta']['commands']>, who: string, meta?: CallMeta): string {
  const pick =
    walkCommand(commands, meta) ??
    commands.find((c) => c.executor === 'finish') ??
    commands.find((c) => c.executor !== 'code') ??
    commands[0]!;
  const args: Record<string, unknown> = {};
  for (const name of pick.required) args[name] = placeholder(name, pick.argTypes?.[name], who);
  return JSON.stringify({ command: pick.name, command_args: args });
}

/**
 * A population agent's action in a dry run: one of its actions, drawn from (agent, turn), with
 * arguments taken from what it sees (`argChoices`: a post id of its feed, an account) where there
 * are some, else placeholders of their types; so the world gets actions it can apply.
 */
function mockAction(commands: NonNullable<CallMeta['commands']>, meta: CallMeta): string {
  const h = fmix32(fnv1a(`${meta.agent ?? ''}:${meta.turn}`));
  const usable = commands.filter((c) => c.required.every((a) => meta.argChoices?.[a]?.length || !a.endsWith('_id')));
  const list = usable.length > 0 ? usable : commands;
  const pick = list[h % list.length]!;
  const args: Record<string, unknown> = {};
  for (const name of pick.required) {
    const choices = meta.argChoices?.[name];
    args[name] = choices?.length
      ? choices[(h >>> 8) % choices.length]
      : placeholder(name, pick.argTypes?.[name], `${meta.agent ?? 'agent'} at turn ${meta.turn}`);
  }
  return JSON.stringify({ command: pick.name, command_args: args });
}

function walkCommand(commands: NonNullable<CallMeta['commands']>, meta: CallMeta | undefined) {
  const walk = meta?.walk;
  if (!walk) return undefined;
  // turnInState of an agent call counts the turn in progress
  const turn = Math.max(0, (meta.turnInState ?? 1) - 1 - walk.turnsBefore);
  const subflows = commands.filter((c) => c.executor === 'sop');
  if (turn < subflows.length) return subflows[turn];
  const ways = commands.flatMap((c) => {
    const key = walk.commandKeys?.[c.name];
    const route = walk.routes.find((r) => r.key === key);
    return route ? [{ command: c, steps: route.steps, visits: route.visits }] : [];
  });
  return chooseRoute(ways, walk.seed, turn - subflows.length)?.command;
}

function placeholder(name: string, spec: { type: string; enum?: string[] } | undefined, who: string): unknown {
  if (spec?.enum?.length) return spec.enum[0];
  switch (spec?.type) {
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'array':
      return [];
    case 'object':
      return {};
    default:
      return `[mock] ${name} from ${who}`;
  }
}
