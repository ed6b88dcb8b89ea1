// The declared resolution of a step's simultaneous moves: which order the world applies the
// step's actions in. Pure functions of (actions, policy, step): the result never depends on the
// order the actions arrived in, because every policy starts from the canonical order (agent id,
// then the agent's own sequence) and draws its randomness from (seed, step) alone.
//   shuffle  - a seeded shuffle of the acting agents; an agent's own actions stay in its order
//   priority - an expression over the agent's attributes and its action; higher first, ties by the shuffle
//   judge    - the shuffle, except that where actions contest one object (the same post, the same
//              order-book level) a judge (an LLM call, made by the caller) gives their order
import { EngineError } from '../../../shared/errors.js';
import { compileExpression, type CompiledExpression } from './expr.js';
import { compareIds, seededRng, shuffleInPlace } from './seed.js';
import type { StepAction } from './world.js';

export type OrderPolicy =
  { type: 'shuffle'; seed: number } | { type: 'priority'; expr: string; seed: number } | { type: 'judge'; seed: number };

const stableJson = (v: unknown): string =>
  v === null || typeof v !== 'object'
    ? (JSON.stringify(v) ?? 'null')
    : Array.isArray(v)
      ? `[${v.map(stableJson).join(',')}]`
      : `{${Object.keys(v)
          .sort(compareIds)
          .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
          .join(',')}}`;

function compareActions(a: StepAction, b: StepAction): number {
  return (
    compareIds(a.agent, b.agent) ||
    (a.seq ?? 0) - (b.seq ?? 0) ||
    compareIds(a.name, b.name) ||
    compareIds(stableJson(a.args), stableJson(b.args))
  );
}

/** Sorted by agent id, then the agent's sequence (then name and arguments, for full ties). */
export function canonicalOrder(actions: readonly StepAction[]): StepAction[] {
  return [...actions].sort(compareActions);
}

/**
 * The seeded shuffle: agents in an order drawn from (seed, step), each agent's actions in its own
 * order. `sorted`: the actions are in canonical order already (the caller put them so).
 */
export function shuffleOrder(actions: readonly StepAction[], seed: number, step: number, sorted = false): StepAction[] {
  // one action per agent (a rule step): the agents' order is the actions' order, shuffled the same way
  const canonical = sorted ? [...actions] : canonicalOrder(actions);
  let single = true;
  for (let i = 1; i < canonical.length && single; i++) single = canonical[i]!.agent !== canonical[i - 1]!.agent;
  if (single) return shuffleInPlace(canonical, seededRng(seed, 'order', step));
  const byAgent = new Map<string, StepAction[]>();
  for (const a of canonical) {
    const list = byAgent.get(a.agent);
    if (list) list.push(a);
    else byAgent.set(a.agent, [a]);
  }
  const agents = shuffleInPlace([...byAgent.keys()], seededRng(seed, 'order', step));
  return agents.flatMap((id) => byAgent.get(id)!);
}

export type AttrsOf = (agentId: string) => Readonly<Record<string, unknown>> | undefined;

/**
 * Higher priority first; ties (and NaN, which goes last) in the seeded shuffle's order. The
 * expression sees the agent's attributes by name, `agent` (id and attributes) and `action`
 * (name and args), e.g. `followers + (action.name == "post" ? 100 : 0)`.
 */
export function priorityOrder(
  actions: readonly StepAction[],
  expr: string | CompiledExpression,
  seed: number,
  step: number,
  attrsOf: AttrsOf,
  sorted = false,
): StepAction[] {
  const compiled = typeof expr === 'string' ? compileExpression(expr) : expr;
  const base = shuffleOrder(actions, seed, step, sorted);
  const scored = base.map((action, position) => {
    const attrs = attrsOf(action.agent) ?? {};
    const value = compiled.number({ ...attrs, agent: { ...attrs, id: action.agent }, action: { name: action.name, args: action.args } });
    return { action, position, score: Number.isNaN(value) ? -Infinity : value };
  });
  scored.sort((x, y) => (y.score === x.score ? x.position - y.position : y.score > x.score ? 1 : -1));
  return scored.map((s) => s.action);
}

/**
 * The order of a shuffle or priority policy; a judge policy's base order (see applyJudgeDecisions).
 * `sorted`: the actions are in canonical order already.
 */
export function orderActions(
  actions: readonly StepAction[],
  policy: OrderPolicy,
  step: number,
  attrsOf: AttrsOf = () => undefined,
  sorted = false,
): StepAction[] {
  switch (policy.type) {
    case 'priority':
      return priorityOrder(actions, policy.expr, policy.seed, step, attrsOf, sorted);
    default:
      return shuffleOrder(actions, policy.seed, step, sorted);
  }
}

/** Actions touching one object, for a judge. */
export interface ContestedObject {
  /** The world's name of the object, e.g. "post:p17", "book:bid:120". */
  object: string;
  /** In canonical order; the judge's reply indexes into this list. */
  actions: StepAction[];
}

/**
 * Groups of two or more actions, of two or more agents, that touch the same object (as the
 * world's `objectOf` names it), sorted by object name.
 */
export function contestedObjects(actions: readonly StepAction[], objectOf: (a: StepAction) => string | undefined): ContestedObject[] {
  const groups = new Map<string, StepAction[]>();
  for (const a of canonicalOrder(actions)) {
    const object = objectOf(a);
    if (object === undefined) continue;
    const list = groups.get(object);
    if (list) list.push(a);
    else groups.set(object, [a]);
  }
  return [...groups.entries()]
    .filter(([, list]) => new Set(list.map((a) => a.agent)).size >= 2)
    .sort(([a], [b]) => compareIds(a, b))
    .map(([object, list]) => ({ object, actions: list }));
}

/** What a judge is asked about one contested object (JSON for its prompt). */
export function judgeRequest(group: ContestedObject): {
  object: string;
  actions: Array<{ index: number; agent: string; name: string; args: Record<string, unknown> }>;
} {
  return { object: group.object, actions: group.actions.map((a, index) => ({ index, agent: a.agent, name: a.name, args: a.args })) };
}

/** The JSON Schema of a judge's reply: the indices of the actions to apply, first first; the others are refused. */
export const JUDGE_REPLY_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['order'],
  properties: {
    order: {
      type: 'array',
      items: { type: 'integer', minimum: 0 },
      uniqueItems: true,
      description: 'indices of the actions to apply, in order',
    },
    reason: { type: 'string', description: 'one short sentence' },
  },
} as const;

export class JudgeReplyError extends EngineError {
  constructor(message: string) {
    super(message, 'JUDGE_REPLY');
    this.name = 'JudgeReplyError';
  }
}

/** The judge's order for a group, from its reply (text or parsed JSON); throws JudgeReplyError with one line. */
export function parseJudgeReply(reply: unknown, group: ContestedObject): number[] {
  let value = reply;
  if (typeof reply === 'string') {
    try {
      value = JSON.parse(reply);
    } catch {
      throw new JudgeReplyError(`judge reply for ${group.object} is not JSON`);
    }
  }
  const order = (value as { order?: unknown } | null)?.order;
  if (!Array.isArray(order)) throw new JudgeReplyError(`judge reply for ${group.object} has no "order" list`);
  const seen = new Set<number>();
  for (const i of order) {
    if (!Number.isInteger(i) || (i as number) < 0 || (i as number) >= group.actions.length)
      throw new JudgeReplyError(
        `judge reply for ${group.object}: ${JSON.stringify(i)} is not an action index (0..${group.actions.length - 1})`,
      );
    if (seen.has(i as number)) throw new JudgeReplyError(`judge reply for ${group.object}: index ${String(i)} appears twice`);
    seen.add(i as number);
  }
  return order as number[];
}

/**
 * The judge policy's final order: the seeded shuffle, where each contested group's slots are
 * refilled with the judge's order (`decisions[object]`, indices into the group's actions); the
 * actions a judge left out are refused. A group without a decision keeps the shuffle's order.
 */
export function applyJudgeDecisions(
  actions: readonly StepAction[],
  seed: number,
  step: number,
  groups: readonly ContestedObject[],
  decisions: Readonly<Record<string, readonly number[]>>,
): { order: StepAction[]; refused: StepAction[] } {
  const base = shuffleOrder(actions, seed, step);
  const key = (a: StepAction) => `${a.agent}\u0000${a.seq ?? 0}\u0000${a.name}\u0000${stableJson(a.args)}`;
  const slotOf = new Map<string, { group: number; member: number }>();
  groups.forEach((g, gi) => g.actions.forEach((a, mi) => slotOf.set(key(a), { group: gi, member: mi })));
  const next = groups.map(() => 0);
  const chosen = groups.map((g) => (Object.hasOwn(decisions, g.object) ? decisions[g.object]!.map((i) => g.actions[i]!) : null));
  const order: StepAction[] = [];
  for (const a of base) {
    const slot = slotOf.get(key(a));
    if (!slot || chosen[slot.group] === null) {
      order.push(a);
      continue;
    }
    const pick = chosen[slot.group]![next[slot.group]!++];
    if (pick) order.push(pick);
  }
  const kept = new Set(order.map(key));
  const refused = canonicalOrder(actions.filter((a) => !kept.has(key(a))));
  return { order, refused };
}
