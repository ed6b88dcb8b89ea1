// The `rule` cognition tier's policies (docs/population.md#cognition-tiers): declared behaviour
// with no LLM, for baselines, calibration and tests. A policy sees what an LLM agent would (its
// observation of the step-start state) and a generator seeded from (seed, step, agent), so its
// choice never depends on which agents ran first. Programs add their own with `registerRulePolicy`.
import { EngineError } from '../../shared/errors.js';
import { isObject } from '../../shared/util/is-object.js';
import type { RulePolicy } from './worlds/rule.js';
import { ziC } from './worlds/zic.js';

export type RulePolicyMaker = (params: Record<string, unknown>, actions: readonly string[]) => RulePolicy;

const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/** Posts in an observation's feed, newest-ranked first (the social world's observation). */
function feedOf(observation: unknown): Array<{ id: string; author: string }> {
  const feed = (observation as { feed?: unknown } | null)?.feed;
  return Array.isArray(feed)
    ? (feed as unknown[]).filter((p): p is { id: string; author: string } => isObject(p) && typeof p.id === 'string')
    : [];
}

const POLICIES = new Map<string, RulePolicyMaker>([
  ['idle', () => () => []],
  // One action of the menu, uniformly; arguments from what the agent sees (a post of its feed) where one is needed.
  [
    'random',
    (_params, actions) =>
      ({ observation, rng, agent }) => {
        const name = actions[Math.floor(rng.next() * actions.length)];
        if (!name || name === 'idle') return [];
        const post = feedOf(observation)[0];
        if (name === 'post') return [{ name, args: { text: `a post by ${agent}` } }];
        if ((name === 'like' || name === 'repost') && post) return [{ name, args: { post_id: post.id } }];
        if (name === 'follow' && post) return [{ name, args: { agent_id: post.author } }];
        return [];
      },
  ],
  // Independent cascade on a feed: repost the first post of the feed not one's own with
  // probability `repost`, else like it with probability `like`, else post with probability `post`.
  [
    'cascade',
    (params) => {
      const repost = num(params.repost, 0.2);
      const like = num(params.like, 0.2);
      const post = num(params.post, 0);
      return ({ observation, rng, agent }) => {
        const top = feedOf(observation).find((p) => p.author !== agent);
        const u = rng.next();
        if (top && u < repost) return [{ name: 'repost', args: { post_id: top.id } }];
        if (top && u < repost + like) return [{ name: 'like', args: { post_id: top.id } }];
        if (rng.next() < post) return [{ name: 'post', args: { text: `news from ${agent}` } }];
        return [];
      };
    },
  ],
  // Gode and Sunder's zero-intelligence-constrained traders (market world).
  ['zic', (params) => ziC({ decimals: num(params.decimals, 2) })],
]);

export class RulePolicyError extends EngineError {
  constructor(message: string) {
    super(message, 'RULE_POLICY');
    this.name = 'RulePolicyError';
  }
}

/** Names of the rule policies a SOP may use. */
export const rulePolicyNames = (): string[] => [...POLICIES.keys()].sort();

/** Adds a rule policy a SOP can name in `cognition.policy` (a name already taken is an error). */
export function registerRulePolicy(name: string, make: RulePolicyMaker): void {
  if (POLICIES.has(name)) throw new RulePolicyError(`a rule policy named "${name}" is already registered`);
  POLICIES.set(name, make);
}

export function rulePolicy(name: string, params: Record<string, unknown>, actions: readonly string[]): RulePolicy {
  const make = POLICIES.get(name);
  if (!make) throw new RulePolicyError(`unknown rule policy "${name}" (policies: ${rulePolicyNames().join(', ')})`);
  return make(params, actions);
}
