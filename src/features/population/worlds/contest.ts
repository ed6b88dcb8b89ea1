// The `contest` world: Nagel's (1995) p-beauty contest played over rounds, a step a round. Each
// player chooses a number in [min, max]; the round's target is p times the mean of the choices,
// and the players closest to it win. The public snapshot of the next round gives the last round's
// mean and target (the feedback of the experiments), and p.
import { builtinWorld, type ActionSpec, type Metrics } from './world.js';

export interface ContestParams {
  p: number;
  min: number;
  max: number;
}

export interface ContestRound {
  round: number;
  mean: number;
  target: number;
  min: number;
  max: number;
  winners: string[];
}

export interface ContestState {
  params: ContestParams;
  /** The rounds played (the last one is the feedback). */
  rounds: number;
  last: ContestRound | null;
  /** The round played at the last step, for its metrics (null when no one chose). */
  played: ContestRound | null;
}

export const contestParamsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    p: { type: 'number', minimum: 0, default: 0.6666666666666666, description: 'the target is p times the mean' },
    min: { type: 'number', default: 0 },
    max: { type: 'number', default: 100 },
  },
} as const;

const actions: ActionSpec[] = [
  {
    name: 'choose',
    description: 'Choose your number for this round.',
    parameters: { type: 'object', additionalProperties: false, required: ['value'], properties: { value: { type: 'number' } } },
  },
  { name: 'idle', description: 'Sit this round out.', parameters: { type: 'object', additionalProperties: false, properties: {} } },
];

export const contest = builtinWorld<ContestState, ContestParams>({
  name: 'contest',
  description: "Nagel's p-beauty contest over rounds: choose a number, the closest to p times the mean wins.",
  params: contestParamsSchema,
  actions,
  init: (params) => ({ params, rounds: 0, last: null, played: null }),
  snapshot: (s) => ({ p: s.params.p, round: s.rounds + 1, mean: s.last?.mean ?? null, target: s.last?.target ?? null }),
  observe: (s, agentId) => ({
    p: s.params.p,
    round: s.rounds + 1,
    last_mean: s.last?.mean ?? null,
    last_target: s.last?.target ?? null,
    won_last: s.last?.winners.includes(agentId) ?? false,
  }),
  apply(s, stepActions) {
    const { min, max, p } = s.params;
    const valid = new Map<number, number>();
    stepActions.forEach((a, n) => {
      const v = Number(a.args.value);
      if (a.name === 'choose' && Number.isFinite(v) && v >= min && v <= max) valid.set(n, v);
    });
    s.played = null;
    if (valid.size > 0) {
      const values = [...valid.values()];
      const mean = values.reduce((x, y) => x + y, 0) / values.length;
      const target = p * mean;
      const best = values.reduce((b, v) => Math.min(b, Math.abs(v - target)), Infinity);
      const winners = [...valid].filter(([, v]) => Math.abs(v - target) === best).map(([n]) => stepActions[n]!.agent);
      s.rounds++;
      s.played = {
        round: s.rounds,
        mean,
        target,
        min: values.reduce((a, b) => Math.min(a, b)),
        max: values.reduce((a, b) => Math.max(a, b)),
        winners,
      };
      s.last = s.played;
    }
    return stepActions.map((a, n) => {
      if (a.name === 'idle') return { agent: a.agent, name: a.name, ok: true, output: 'sat out' };
      const v = valid.get(n);
      if (v === undefined) return { agent: a.agent, name: a.name, ok: false, output: `choose a number in ${min}..${max}` };
      const won = s.played!.winners.includes(a.agent);
      return { agent: a.agent, name: a.name, ok: true, output: `chose ${v}; target ${s.played!.target.toFixed(2)}${won ? ', won' : ''}` };
    });
  },
  metrics: (s): Metrics => ({
    mean: s.played?.mean ?? null,
    target: s.played?.target ?? null,
    min: s.played?.min ?? null,
    max: s.played?.max ?? null,
    winners: s.played?.winners.length ?? 0,
  }),
});
