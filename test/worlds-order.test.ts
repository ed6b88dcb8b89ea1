// The ordering of a step's simultaneous moves: every policy's result is a function of the actions
// as a set, the seed and the step, never of the order the actions arrived in.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileExpression } from '../src/features/population/worlds/expr.js';
import {
  applyJudgeDecisions,
  canonicalOrder,
  contestedObjects,
  orderActions,
  parseJudgeReply,
  priorityOrder,
  shuffleOrder,
} from '../src/features/population/worlds/order.js';
import { social } from '../src/features/population/worlds/social.js';
import type { StepAction } from '../src/features/population/worlds/world.js';

const actions: StepAction[] = Array.from({ length: 40 }, (_, i) => ({
  agent: `a${i % 25}`,
  name: i % 3 === 0 ? 'like' : 'post',
  args: i % 3 === 0 ? { post_id: `p${i % 4}` } : { text: `t${i}` },
  seq: i < 25 ? 0 : 1,
}));
const attrs = (id: string) => ({ followers: Number(id.slice(1)) % 7, party: Number(id.slice(1)) % 2 ? 'left' : 'right' });
const ids = (list: StepAction[]) => list.map((a) => `${a.agent}/${a.seq}/${a.name}`);

describe('order policies', () => {
  it('never depend on the input order (shuffle, priority, judge)', () => {
    const groups = contestedObjects(actions, social.objectOf!.bind(social));
    const decisions = Object.fromEntries(
      groups.map((g) => [
        g.object,
        g.actions
          .map((_, i) => i)
          .reverse()
          .slice(0, 2),
      ]),
    );
    const shuffle = ids(orderActions(actions, { type: 'shuffle', seed: 7 }, 3));
    const priority = ids(orderActions(actions, { type: 'priority', expr: 'followers * 2 + (action.name == "like")', seed: 7 }, 3, attrs));
    const judged = ids(applyJudgeDecisions(actions, 7, 3, groups, decisions).order);
    fc.assert(
      fc.property(fc.shuffledSubarray(actions, { minLength: actions.length, maxLength: actions.length }), (permuted) => {
        expect(ids(orderActions(permuted, { type: 'shuffle', seed: 7 }, 3))).toEqual(shuffle);
        expect(
          ids(orderActions(permuted, { type: 'priority', expr: 'followers * 2 + (action.name == "like")', seed: 7 }, 3, attrs)),
        ).toEqual(priority);
        const g = contestedObjects(permuted, social.objectOf!.bind(social));
        expect(ids(applyJudgeDecisions(permuted, 7, 3, g, decisions).order)).toEqual(judged);
      }),
      { numRuns: 50 },
    );
  });

  it('shuffles by seed and step, keeping each agent’s own actions in its order', () => {
    const a = ids(shuffleOrder(actions, 1, 0));
    expect(ids(shuffleOrder(actions, 1, 0))).toEqual(a);
    expect(ids(shuffleOrder(actions, 1, 1))).not.toEqual(a);
    expect(ids(shuffleOrder(actions, 2, 0))).not.toEqual(a);
    expect(ids(shuffleOrder(actions, 1, 0)).sort()).toEqual(ids(canonicalOrder(actions)).sort());
    const order = shuffleOrder(actions, 1, 0);
    for (const agent of new Set(actions.map((x) => x.agent))) {
      const mine = order.filter((x) => x.agent === agent).map((x) => x.seq);
      expect(mine).toEqual([...mine].sort());
      const at = order.map((x, i) => (x.agent === agent ? i : -1)).filter((i) => i >= 0);
      expect(at[at.length - 1]! - at[0]!).toBe(at.length - 1); // contiguous
    }
  });

  it('puts higher priorities first and breaks ties by the seeded shuffle', () => {
    const order = priorityOrder(actions, 'followers', 5, 2, attrs);
    const scores = order.map((a) => attrs(a.agent).followers);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
    const tied = priorityOrder(actions, '1', 5, 2, attrs);
    expect(ids(tied)).toEqual(ids(shuffleOrder(actions, 5, 2)));
    // and/or/not words, string comparison, member access, functions
    const rule = 'not (action.name == "post") and party == "left" or max(followers, 0) > 5';
    const truth = (a: StepAction) => (a.name !== 'post' && attrs(a.agent).party === 'left') || attrs(a.agent).followers > 5;
    const flags = priorityOrder(actions, rule, 5, 2, attrs).map(truth);
    expect(flags.indexOf(false)).toBe(flags.filter(Boolean).length); // every true before every false
    expect(flags.filter(Boolean).length).toBeGreaterThan(0);
  });

  it('groups contested objects and refills their slots with the judge’s order', () => {
    const groups = contestedObjects(actions, social.objectOf!.bind(social));
    expect(groups.map((g) => g.object)).toEqual(['post:p0', 'post:p1', 'post:p2', 'post:p3']);
    const g = groups[0]!;
    const pick = parseJudgeReply(JSON.stringify({ order: [2, 0] }), g);
    const { order, refused } = applyJudgeDecisions(actions, 9, 0, groups, { [g.object]: pick });
    const inGroup = order.filter((a) => g.actions.includes(a));
    expect(inGroup).toEqual([g.actions[2], g.actions[0]]);
    expect(refused).toEqual(canonicalOrder(g.actions.filter((_, i) => i !== 0 && i !== 2)));
    expect(order.length + refused.length).toBe(actions.length);
    expect(() => parseJudgeReply({ order: [0, 0] }, g)).toThrow(/appears twice/);
    expect(() => parseJudgeReply({ order: [99] }, g)).toThrow(/not an action index/);
    expect(() => parseJudgeReply('nope', g)).toThrow(/not JSON/);
  });
});

describe('expressions', () => {
  it('evaluates arithmetic, comparisons, logic, members and functions', () => {
    const scope = { a: 3, b: 4, s: 'x', o: { n: { m: 2 } }, list: [5, 6] };
    const v = (src: string) => compileExpression(src).evaluate(scope);
    expect(v('a * b + 1')).toBe(13);
    expect(v('(a + b) % 4')).toBe(3);
    expect(v('a < b and not (s == "y")')).toBe(true);
    expect(v('a > b || o.n.m === 2')).toBe(true);
    expect(v('list[1] - -1')).toBe(7);
    expect(v('a > 2 ? "big" : "small"')).toBe('big');
    expect(v('max(a, b, 10) + abs(-2) + floor(2.7)')).toBe(14);
    expect(v('o.missing')).toBeUndefined();
  });

  it('refuses what could escape: prototypes, constructors, calls of anything but the math functions', () => {
    expect(() => compileExpression('o.constructor')).toThrow(/not allowed/);
    expect(() => compileExpression('o["__proto__"]').evaluate({ o: {} })).toThrow(/not allowed/);
    expect(() => compileExpression('s.toString()')).toThrow(/only the functions/);
    expect(() => compileExpression('this')).toThrow(/not allowed/);
    expect(() => compileExpression('x = 1')).toThrow();
    expect(() => compileExpression('a +')).toThrow(/cannot parse/);
    expect(() => compileExpression('nope + 1').evaluate({})).toThrow(/unknown name "nope"/);
  });
});
