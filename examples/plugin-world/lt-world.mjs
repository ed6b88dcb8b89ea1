// A plugin (docs/population.md#plugins): a linear-threshold world "lt", the rule policy
// "lt-adopt" and the metric "adopters", registered through sop/extend. The same cascade as
// examples/models/threshold-cascade, which needs no code: this one shows what a module can add.
import { defineWorld, registerMetric, registerRulePolicy, registerWorld } from 'sop/extend';

const lt = defineWorld({
  name: 'lt',
  description: 'Linear-threshold adoption on an undirected graph: who has adopted, and each agent the share of its neighbours who have.',
  params: {
    type: 'object',
    additionalProperties: false,
    properties: { seeds: { type: 'array', items: { type: 'string' }, default: [] } },
  },
  graph: true, // takes world.graph (an edge list read from its file arrives as ctx.graph.edges)
  actions: [
    { name: 'adopt', description: 'Adopt.', parameters: { type: 'object', additionalProperties: false, properties: {} } },
    { name: 'idle', description: 'Do nothing.', parameters: { type: 'object', additionalProperties: false, properties: {} } },
  ],
  init(params, agents, _rng, ctx) {
    const near = Object.fromEntries(agents.map((a) => [a.id, []]));
    for (const [a, b] of ctx?.graph?.edges ?? []) {
      if (!(a in near) || !(b in near) || a === b) continue;
      if (!near[a].includes(b)) near[a].push(b);
      if (!near[b].includes(a)) near[b].push(a);
    }
    return { near, adopted: Object.fromEntries(agents.map((a) => [a.id, params.seeds.includes(a.id)])) };
  },
  snapshot: (s) => ({ adopters: Object.values(s.adopted).filter(Boolean).length }),
  observe(s, id) {
    const near = s.near[id] ?? [];
    const share = near.length === 0 ? 0 : near.filter((n) => s.adopted[n]).length / near.length;
    return { adopted: s.adopted[id] === true, share };
  },
  neighbours: (s, id) => s.near[id] ?? [],
  apply: (s, actions) =>
    actions.map((a) => {
      if (a.name === 'adopt') s.adopted[a.agent] = true;
      return { agent: a.agent, name: a.name, ok: true, output: a.name === 'adopt' ? 'adopted' : 'idle' };
    }),
  metrics: (s) => ({ adopted: Object.values(s.adopted).filter(Boolean).length }),
});
registerWorld(lt);

// adopt when at least `theta` of one's neighbours had adopted at the start of the step
registerRulePolicy('lt-adopt', (params) => {
  const theta = Number(params.theta ?? 0.5);
  return ({ observation }) => (!observation.adopted && observation.share >= theta ? [{ name: 'adopt', args: {} }] : []);
});

// the agents whose last action was "adopt" at this step
registerMetric('new_adopters', ({ actions }) => actions.filter((a) => a.name === 'adopt' && a.ok).length);
