// The `judge` resolution of a population step (Concordia style): the seeded shuffle, except
// where two or more agents' actions touch one object (a post, an account, an order-book level, a
// board key); for each such object an LLM judge gives the order of its actions and may refuse
// some. A reply that cannot be read keeps the shuffle's order for that object, with a warning.
import type { RunContext } from '../../core/runtime/context.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import { controllerLlm } from '../../format/sop/resolved.js';
import { applyJudgeDecisions, contestedObjects, judgeRequest, JUDGE_REPLY_SCHEMA, parseJudgeReply } from './worlds/order.js';
import type { AnyWorld, StepAction } from './worlds/world.js';

const SYSTEM =
  'You resolve simultaneous actions in a simulation. Several people acted on the same object in the same moment. ' +
  'Decide which of their actions take effect and in which order; leave out those that cannot happen. ' +
  `Reply with one JSON object and nothing else, matching this JSON Schema: ${JSON.stringify(JUDGE_REPLY_SCHEMA)}`;

export async function judgeOrder(
  ctx: Pick<RunContext, 'call' | 'resolved' | 'emit'>,
  state: ResolvedState,
  world: AnyWorld,
  actions: readonly StepAction[],
  seed: number,
  step: number,
  turn: number,
): Promise<{ order: StepAction[]; refused: StepAction[] }> {
  const groups = world.objectOf ? contestedObjects(actions, (a) => world.objectOf!(a)) : [];
  const decisions: Record<string, number[]> = {};
  const settings = controllerLlm(ctx.resolved, state);
  // one call per contested object, one after the other (their order is the objects' sorted order)
  for (const group of groups) {
    const reply = await ctx.call(
      [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: JSON.stringify(judgeRequest(group)) },
      ],
      settings,
      {
        purpose: 'judge',
        state: state.name,
        turn,
        population: true,
        candidates: group.actions.map((_, i) => String(i)),
      },
      false,
      `${step}:judge:${group.object}`,
    );
    try {
      decisions[group.object] = parseJudgeReply(reply, group);
    } catch (e) {
      ctx.emit({ type: 'warning', message: `${(e as Error).message}; its actions keep the shuffle's order` });
    }
  }
  return applyJudgeDecisions(actions, seed, step, groups, decisions);
}
