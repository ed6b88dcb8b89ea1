// The `groups` world: a linear public goods game in groups (Fehr and Gaechter 2000), a round a
// step, or two steps with punishment: a contribution stage, then a punishment stage.
//   contribute {amount}: of an endowment e; each member earns e - c_i + mpcr * (sum of the
//                        group's contributions);
//   punish {agent_id, points}: (punishment stage) costs the punisher punish_cost a point and the
//                        punished member of the group punish_impact a point.
// Groups are drawn at random (seeded) at the start and kept (`matching: "partner"`), or drawn
// anew each round (`"stranger"`). An agent's neighbours are the other members of its group.
import type { Rng } from '../../../core/runtime/rng.js';
import { seededRng, shuffleInPlace } from './seed.js';
import { agentIndex, builtinWorld, type ActionOutcome, type ActionSpec, type Metrics, type WorldAgent } from './world.js';

export interface GroupsParams {
  group_size: number;
  endowment: number;
  mpcr: number;
  punishment: boolean;
  punish_cost: number;
  punish_impact: number;
  max_points: number;
  matching: 'partner' | 'stranger';
}

export interface GroupsState {
  params: GroupsParams;
  ids: string[];
  /** Group of each agent (by index) this round. */
  group: number[];
  seed: number;
  round: number;
  stage: 'contribute' | 'punish';
  /** This round's contributions and earnings by agent id. */
  contribution: Record<string, number>;
  earnings: Record<string, number>;
  /** Punishment points each agent received in the last punishment stage. */
  punished: Record<string, number>;
  /** The last step's figures, for its metrics. */
  last: { stage: 'contribute' | 'punish'; contribution: number | null; earnings: number | null; points: number };
}

export const groupsParamsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    group_size: { type: 'integer', minimum: 1, default: 4 },
    endowment: { type: 'number', minimum: 0, default: 20 },
    mpcr: { type: 'number', minimum: 0, default: 0.4, description: 'the marginal per-capita return of a contribution' },
    punishment: { type: 'boolean', default: false, description: 'whether each round has a punishment stage after the contributions' },
    punish_cost: { type: 'number', minimum: 0, default: 1 },
    punish_impact: { type: 'number', minimum: 0, default: 3 },
    max_points: { type: 'integer', minimum: 0, default: 10 },
    matching: {
      enum: ['partner', 'stranger'],
      default: 'partner',
      description: 'groups kept for the whole game, or drawn anew each round',
    },
  },
} as const;

const actions: ActionSpec[] = [
  {
    name: 'contribute',
    description: 'Put part of your endowment into the group project (contribution stage).',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['amount'],
      properties: { amount: { type: 'number', minimum: 0 } },
    },
  },
  {
    name: 'punish',
    description: 'Give punishment points to a member of your group (punishment stage); each costs you too.',
    parameters: {
      type: 'object',
      additionalProperties: false,
      required: ['agent_id', 'points'],
      properties: { agent_id: { type: 'string' }, points: { type: 'integer', minimum: 0 } },
    },
  },
  { name: 'idle', description: 'Do nothing this step.', parameters: { type: 'object', additionalProperties: false, properties: {} } },
];

function drawGroups(s: Pick<GroupsState, 'ids' | 'params'>, rng: Rng): number[] {
  const order = shuffleInPlace(
    s.ids.map((_, i) => i),
    rng,
  );
  const group = new Array<number>(s.ids.length).fill(0);
  order.forEach((i, k) => (group[i] = Math.floor(k / s.params.group_size)));
  return group;
}

/** The other members of agent i's group, in population order. */
function mates(s: GroupsState, i: number): number[] {
  const out: number[] = [];
  if (i < 0) return out;
  for (let j = 0; j < s.ids.length; j++) if (j !== i && s.group[j] === s.group[i]) out.push(j);
  return out;
}

export const groups = builtinWorld<GroupsState, GroupsParams>({
  name: 'groups',
  description: 'A linear public goods game in groups, with or without a punishment stage (Fehr and Gaechter 2000).',
  params: groupsParamsSchema,
  actions,
  init(params, agents: readonly WorldAgent[], rng: Rng) {
    const ids = agents.map((a) => a.id);
    const group = drawGroups({ ids, params }, rng);
    return {
      params,
      ids,
      group,
      seed: Math.floor(rng.next() * 4294967296),
      round: 1,
      stage: 'contribute',
      contribution: {},
      earnings: {},
      punished: {},
      last: { stage: 'contribute', contribution: null, earnings: null, points: 0 },
    };
  },
  snapshot: (s) => ({ round: s.round, stage: s.stage, endowment: s.params.endowment, mpcr: s.params.mpcr }),
  observe(s, agentId) {
    const i = agentIndex(s, agentId);
    const others = mates(s, i).map((j) => ({ id: s.ids[j]!, contribution: s.contribution[s.ids[j]!] ?? null }));
    let lowest: { id: string; contribution: number } | undefined;
    for (const o of others)
      if (o.contribution !== null && (lowest === undefined || o.contribution < lowest.contribution))
        lowest = { id: o.id, contribution: o.contribution };
    return {
      round: s.round,
      stage: s.stage,
      contribution: s.contribution[agentId] ?? null,
      group: others,
      lowest: lowest ?? null,
      punished: s.punished[agentId] ?? 0,
    };
  },
  neighbours: (s, agentId) => mates(s, agentIndex(s, agentId)).map((j) => s.ids[j]!),
  apply(s, stepActions): ActionOutcome[] {
    const p = s.params;
    const done = (a: { agent: string; name: string }, ok: boolean, output: string) => ({ agent: a.agent, name: a.name, ok, output });
    if (s.stage === 'contribute') {
      s.contribution = {};
      const outcomes = stepActions.map((a) => {
        if (a.name === 'idle') return done(a, true, 'idle');
        const amount = Number(a.args.amount);
        if (a.name !== 'contribute') return done(a, false, 'this is the contribution stage');
        if (agentIndex(s, a.agent) < 0) return done(a, false, `${a.agent} is not a player`);
        if (!Number.isFinite(amount) || amount < 0 || amount > p.endowment) return done(a, false, `contribute 0..${p.endowment}`);
        s.contribution[a.agent] = amount;
        return done(a, true, `contributed ${amount}`);
      });
      const sums = new Map<number, number>();
      s.ids.forEach((id, i) => sums.set(s.group[i]!, (sums.get(s.group[i]!) ?? 0) + (s.contribution[id] ?? 0)));
      s.earnings = Object.fromEntries(
        s.ids.map((id, i) => [id, p.endowment - (s.contribution[id] ?? 0) + p.mpcr * sums.get(s.group[i]!)!]),
      );
      const given = Object.values(s.contribution);
      s.last = {
        stage: 'contribute',
        contribution: given.length === 0 ? null : given.reduce((x, y) => x + y, 0) / given.length,
        earnings: s.ids.length === 0 ? null : Object.values(s.earnings).reduce((x, y) => x + y, 0) / s.ids.length,
        points: 0,
      };
      if (p.punishment) s.stage = 'punish';
      else nextRound(s);
      return outcomes;
    }
    s.punished = {};
    let points = 0;
    const outcomes = stepActions.map((a) => {
      if (a.name === 'idle') return done(a, true, 'idle');
      if (a.name !== 'punish') return done(a, false, 'this is the punishment stage');
      const i = agentIndex(s, a.agent);
      const target = String(a.args.agent_id);
      const j = agentIndex(s, target);
      const n = Number(a.args.points);
      if (j < 0 || j === i || s.group[j] !== s.group[i]) return done(a, false, `${target} is not another member of your group`);
      if (!Number.isInteger(n) || n < 0 || n > p.max_points) return done(a, false, `points must be a whole number 0..${p.max_points}`);
      s.earnings[a.agent] = (s.earnings[a.agent] ?? 0) - p.punish_cost * n;
      s.earnings[target] = (s.earnings[target] ?? 0) - p.punish_impact * n;
      s.punished[target] = (s.punished[target] ?? 0) + n;
      points += n;
      return done(a, true, `gave ${target} ${n} points`);
    });
    s.last = {
      stage: 'punish',
      contribution: s.last.contribution,
      earnings: s.ids.length === 0 ? null : Object.values(s.earnings).reduce((x, y) => x + y, 0) / s.ids.length,
      points,
    };
    nextRound(s);
    return outcomes;
  },
  metrics: (s): Metrics => ({
    contribution: s.last.stage === 'contribute' ? s.last.contribution : null,
    earnings: s.last.earnings,
    punishment_points: s.last.stage === 'punish' ? s.last.points : null,
  }),
});

function nextRound(s: GroupsState): void {
  s.round++;
  s.stage = 'contribute';
  if (s.params.matching === 'stranger') s.group = drawGroups(s, seededRng(s.seed, 'groups', s.round));
}
