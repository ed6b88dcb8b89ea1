// Rules as data (docs/population.md#rules-as-data): `sop validate` checks every name a rule
// expression reads at its JSON pointer; a rule run is reproducible from its seed; a case's `set`
// applies only when its action went through; activation expressions read the agent state.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSop, runSop, validateSop, type RunEvent } from '../src/index.js';

/** A SOP file with one population state over `rows` (id,colour) and the given state settings. */
function sopFile(state: Record<string, unknown>, extra: Record<string, unknown> = {}, rows = 4): string {
  const dir = mkdtempSync(join(tmpdir(), 'sop-rules-'));
  writeFileSync(
    join(dir, 'people.csv'),
    ['id,colour', ...Array.from({ length: rows }, (_, i) => `a${i},${i % 2 ? 'red' : 'blue'}`)].join('\n') + '\n',
  );
  const sop = {
    name: 'rules',
    agents: {},
    root: 's',
    ...extra,
    states: {
      s: {
        population: { source: { file: 'people.csv' } },
        world: {
          type: 'network',
          params: { actions: ['adopt'] },
          graph: {
            edges: [
              ['a0', 'a1'],
              ['a1', 'a2'],
              ['a2', 'a3'],
            ],
          },
        },
        activation: { probability: 1 },
        max_steps: 3,
        next_states: { '1': 'done' },
        ...state,
      },
      done: { final: true },
    },
  };
  const file = join(dir, 'rules.sop.json');
  writeFileSync(file, JSON.stringify(sop));
  return file;
}

const errors = (file: string) => validateSop(file).errors.map((d) => `${d.pointer}: ${d.message}`);

const adoptCase = { when: "not adopted and neighbours.share('adopted') >= 0.5", do: 'adopt', set: { adopted: true } };

describe('sop validate of rules as data', () => {
  it('accepts a declared policy and its state', () => {
    expect(errors(sopFile({ agent_state: { adopted: { expr: "id == 'a0'" } }, cognition: { tier: 'rule', cases: [adoptCase] } }))).toEqual(
      [],
    );
  });

  it('names, at its pointer, a name an expression reads that is not a column, a state variable or a name it sees', () => {
    const file = sopFile({
      agent_state: { adopted: { value: false }, colour: { value: 1 } },
      cognition: {
        tier: 'rule',
        cases: [
          { when: 'not adoptd', do: 'adopt' },
          { when: "neighbours.share('adoptd') > inputs.theta", do: 'adopt', set: { adoptd: true } },
          { do: 'post', args: { n: 'random() + colour' } },
        ],
      },
      metrics: { m: { reducer: 'count', over: 'agents', where: 'random() < 0.5' } },
    });
    expect(errors(file)).toEqual([
      '/states/s/agent_state/colour: "colour" is a column of the population too; name the state variable otherwise',
      '/states/s/cognition/cases/0/when: "not adoptd" reads "adoptd", which is not a column, a state variable or a name it sees here (adopted, colour, hour, id, inputs, last_action, memory, neighbours, observation, snapshot, step)',
      `/states/s/cognition/cases/1/when: "neighbours.share('adoptd') > inputs.theta" reads inputs.theta, which the SOP does not declare (inputs: none)`,
      `/states/s/cognition/cases/1/when: "neighbours.share('adoptd') > inputs.theta": neighbours.share('adoptd') reads "adoptd", which is not a column, a state variable, 'action' or 'id' (action, adopted, colour, id)`,
      '/states/s/cognition/cases/1/set/adoptd: "adoptd" is not a state variable (agent_state: adopted, colour)',
      '/states/s/cognition/cases/2/do: "post" is not in the state\'s action menu (adopt, idle)',
      '/states/s/metrics/m/where: only the functions min, max, abs, floor, ceil, round, sqrt, log, exp, pow, in_list may be called',
    ]);
  });

  it('refuses cases on a tier that is not rule, and a policy beside cases', () => {
    const file = sopFile({
      cognition: [
        { tier: 'rule', policy: 'idle', cases: [{ do: 'adopt' }] },
        { tier: 'per_agent', cases: [{ do: 'adopt' }] },
      ],
    });
    expect(errors(file)).toEqual([
      '/states/s/cognition/0/policy: a rule tier follows either a named policy or its cases, not both',
      '/states/s/cognition/1/cases: only a rule tier follows cases (this one is "per_agent")',
    ]);
  });
});

async function steps(file: string, seed: number) {
  const handle = runSop(loadSop(file), { seed });
  const out: Array<{ actions: string[]; metrics: Record<string, number | null> }> = [];
  for await (const e of handle as AsyncIterable<RunEvent>)
    if (e.type === 'population_step') out.push({ actions: e.actions.map((a) => `${a.agent}:${a.name}:${a.ok}`), metrics: e.metrics });
  expect((await handle.result).status).toBe('finished');
  return out;
}

describe('a rule run', () => {
  it('is reproducible from its seed: the same draws give the same steps, another seed others', async () => {
    const file = sopFile(
      {
        agent_state: { x: { expr: 'random()' } },
        cognition: { tier: 'rule', cases: [{ when: 'random() < x', do: 'adopt', set: { x: 'x / 2' } }] },
        metrics: { x_sum: { reducer: 'sum', over: 'agents', of: 'x' } },
        max_steps: 5,
      },
      {},
      40,
    );
    const a = await steps(file, 3);
    expect(await steps(file, 3)).toEqual(a);
    expect(await steps(file, 4)).not.toEqual(a);
  });

  it("changes an agent's state only when its action went through", async () => {
    // a full 2 x 2 grid: no move can go through, so `moved` never changes
    const file = sopFile({
      world: { type: 'grid', params: { width: 2, height: 2 } },
      agent_state: { moved: { value: false } },
      cognition: { tier: 'rule', cases: [{ when: 'not moved', do: 'move', set: { moved: true } }] },
      metrics: { moved: { reducer: 'count', over: 'agents', where: 'moved' } },
    });
    const got = await steps(file, 1);
    expect(got.map((s) => s.metrics.moved)).toEqual([0, 0, 0]);
    expect(got[0]!.actions.every((a) => a.endsWith(':move:false'))).toBe(true);
  });

  it('reads the agent state in activation expressions and last actions in neighbour aggregates', async () => {
    const file = sopFile({
      agent_state: { adopted: { expr: "id == 'a0'" } },
      activation: { expr: 'not adopted' },
      cognition: {
        tier: 'rule',
        cases: [
          { when: "neighbours.count('action', 'adopt') > 0 or neighbours.share('adopted') > 0", do: 'adopt', set: { adopted: true } },
        ],
      },
      metrics: { adopters: { reducer: 'count', over: 'agents', where: 'adopted' } },
    });
    const got = await steps(file, 1);
    // a path a0 - a1 - a2 - a3: one more adopter a step; the adopted never act again
    expect(got.map((s) => s.metrics.adopters)).toEqual([2, 3, 4]);
    expect(got.map((s) => s.actions.length)).toEqual([3, 2, 1]);
  });
});
