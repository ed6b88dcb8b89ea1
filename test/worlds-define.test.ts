// Worlds as data: a user world through defineWorld (checked like the built-ins), the board world's
// reducers, the worlds schema file, and the validation of a population state's `world` and
// `actions` with one line per problem at its JSON pointer.
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../src/format/sop/diagnostics.js';
import { board } from '../src/features/population/worlds/board.js';
import { edgeListFileProblem } from '../src/features/population/worlds/graph-file.js';
import { BUILT_IN_WORLDS, WorldRegistry } from '../src/features/population/worlds/registry.js';
import { worldsSchemaDocument } from '../src/features/population/worlds/schema.js';
import { seededRng } from '../src/features/population/worlds/seed.js';
import { validateResolution, validateWorldSpec } from '../src/features/population/worlds/validate.js';
import { checkActionArgs, defineWorld, resolveParams, worldTools, type World } from '../src/features/population/worlds/world.js';

/**
 * The built-in worlds alone: a world another test file of this worker registered for the whole
 * process (registerWorld, test/population-state.test.ts) is not among them.
 */
const builtIns = () => new WorldRegistry(BUILT_IN_WORLDS);

interface Votes {
  tally: Record<string, number>;
}
const voting: World<Votes, { options: string[] }> = {
  name: 'voting',
  description: 'Agents vote for one option.',
  params: {
    type: 'object',
    additionalProperties: false,
    required: ['options'],
    properties: { options: { type: 'array', items: { type: 'string' }, minItems: 2 } },
  },
  actions: [
    {
      name: 'vote',
      description: 'Vote.',
      parameters: { type: 'object', additionalProperties: false, required: ['option'], properties: { option: { type: 'string' } } },
    },
  ],
  init: (params) => ({ tally: Object.fromEntries(params.options.map((o) => [o, 0])) }),
  snapshot: (state) => state.tally,
  observe: (state) => state.tally,
  apply: (state, actions) =>
    actions.map((a) => {
      const option = String(a.args.option);
      if (!(option in state.tally)) return { agent: a.agent, name: a.name, ok: false, output: `no option ${option}` };
      state.tally[option]!++;
      return { agent: a.agent, name: a.name, ok: true, output: `voted ${option}` };
    }),
  metrics: (state) => ({ ...state.tally }),
};

describe('defineWorld', () => {
  it('accepts a user world, which then validates like a built-in', () => {
    const world = defineWorld(voting);
    const worlds = builtIns().register(world);
    expect(worlds.names()).toEqual(['board', 'contest', 'grid', 'groups', 'market', 'network', 'social', 'voting']);
    expect(
      validateWorldSpec({ type: 'voting', params: { options: ['x', 'y'] } }, '/states/poll/world', { worlds, actions: ['vote'] }),
    ).toEqual([]);
    const bad = validateWorldSpec({ type: 'voting', params: { options: ['x'] } }, '/states/poll/world', {
      worlds,
      actions: ['vote', 'shout'],
    });
    expect(bad.map((d) => formatDiagnostic({ ...d, file: 'poll.sop.json' }))).toEqual([
      'poll.sop.json: /states/poll/world/params/options: must NOT have fewer than 2 items',
      'poll.sop.json: /states/poll/actions/1: "shout" is not an action of world "voting" (its actions: vote)',
    ]);
    const state = world.init({ options: ['x', 'y'] }, [], seededRng(1));
    world.apply(state, [{ agent: 'a', name: 'vote', args: { option: 'y' } }], 0);
    expect(world.metrics(state, 0)).toEqual({ x: 0, y: 1 });
    expect(() => worlds.register(world)).toThrow(/already registered/);
  });

  it('refuses a definition with one clear line', () => {
    expect(() => defineWorld({ ...voting, name: 'Bad Name' })).toThrow(/name must be lower-case/);
    expect(() => defineWorld({ ...voting, actions: [...voting.actions, ...voting.actions] })).toThrow(/"vote" is declared twice/);
    expect(() => defineWorld({ ...voting, params: { type: 'object', properties: { n: { type: 'nonsense' } } } })).toThrow(
      /params schema does not compile/,
    );
    expect(() => defineWorld({ ...voting, actions: [{ name: 'vote', description: 'Vote.', parameters: { type: 'string' } }] })).toThrow(
      /parameters must be a JSON Schema of type "object"/,
    );
    expect(() => defineWorld({ ...voting, save: (s) => s.tally })).toThrow(/save and restore go together/);
  });

  it('accepts each built-in world (made with builtinWorld, whose schemas compile at first use)', () => {
    expect(BUILT_IN_WORLDS.map((w) => w.name).sort()).toEqual(['board', 'contest', 'grid', 'groups', 'market', 'network', 'social']);
    for (const world of BUILT_IN_WORLDS) expect(defineWorld(world), world.name).toEqual(world); // its params and actions schemas compile
  });

  it('checks action arguments against their tool schema', () => {
    const world = defineWorld(voting);
    expect(checkActionArgs(world, { agent: 'a', name: 'vote', args: { option: 'x' } })).toBe('');
    expect(checkActionArgs(world, { agent: 'a', name: 'vote', args: {} })).toBe('vote: missing required key "option"');
    expect(checkActionArgs(world, { agent: 'a', name: 'sing', args: {} })).toBe('"sing" is not an action of world "voting"');
  });
});

describe('board', () => {
  it('folds writes with each key’s reducer; its metrics are the keys', () => {
    const p = resolveParams(board, {
      keys: {
        total: { reducer: 'sum' },
        top: { reducer: 'max' },
        low: { reducer: 'min' },
        n: { reducer: 'count' },
        mood: { reducer: 'last' },
        log: { reducer: 'append' },
      },
      append_limit: 2,
    });
    if (!p.ok) throw new Error(JSON.stringify(p.problems));
    const s = board.init(p.params, [], seededRng(1));
    const w = (agent: string, key: string, value?: unknown) => ({ agent, name: 'write', args: { key, value } });
    const out = board.apply(
      s,
      [
        w('a', 'total', 3),
        w('b', 'total', 4),
        w('a', 'top', 9),
        w('b', 'top', 2),
        w('a', 'low', 5),
        w('b', 'low', -1),
        w('a', 'n'),
        w('b', 'n'),
        w('a', 'mood', 'calm'),
        w('b', 'log', 1),
        w('a', 'log', 2),
        w('c', 'log', 3),
        w('c', 'total', 'x'),
        w('c', 'nope', 1),
      ],
      0,
    );
    expect(out.slice(-2).map((o) => o.output)).toEqual(['total takes a number', 'no key "nope" (keys: log, low, mood, n, top, total)']);
    expect(board.metrics(s, 0)).toEqual({ total: 7, top: 9, low: -1, n: 2, mood: null, 'log.length': 2 });
    expect(board.observe(s, 'a', 1)).toMatchObject({ log: [3], mood: 'calm' });
    const [write] = worldTools(board, p.params, ['write']);
    expect((write!.parameters.properties as Record<string, { enum?: string[] }>).key!.enum).toEqual([
      'log',
      'low',
      'mood',
      'n',
      'top',
      'total',
    ]);
  });
});

describe('validation of a population state’s world', () => {
  it('names the pointer of an action the world does not accept', () => {
    const d = validateWorldSpec({ type: 'social', params: { rank: 'hot' } }, '/states/feed/world', {
      actions: ['post', 'like', 'retweet', 'idle'],
    });
    expect(d.map((x) => `${x.pointer}: ${x.message}`)).toEqual([
      '/states/feed/actions/2: "retweet" is not an action of world "social" (its actions: post, like, repost, follow, idle)',
    ]);
  });

  it('reports unknown worlds, bad params, graphs and missing edge-list files at their pointers', () => {
    const at = (spec: unknown, opts = {}) =>
      validateWorldSpec(spec, '/states/s/world', { worlds: builtIns(), ...opts }).map((x) => `${x.pointer}: ${x.message}`);
    expect(at({ type: 'forum' })).toEqual([
      '/states/s/world/type: unknown world "forum" (worlds: board, contest, grid, groups, market, network, social)',
    ]);
    expect(at({ type: 'social', params: { rank: 'random' } })).toEqual([
      '/states/s/world/params/rank: must be one of "follow", "recency", "hot", "interest"',
    ]);
    expect(at({ type: 'market', params: { mechanism: 'call', tick: 1 } })).toEqual(['/states/s/world/params/tick: unknown key "tick"']);
    expect(at({ type: 'market', graph: { edges: [] } })).toEqual([
      '/states/s/world/graph: world "market" takes no graph (network, social do)',
    ]);
    expect(at({ type: 'social', graph: { generate: { model: 'barabasi_albert', seed: 1 } } })).toEqual([
      '/states/s/world/graph/generate: missing required key "m"',
    ]);
    const missing = (f: string) => edgeListFileProblem(join(tmpdir(), 'sop-no-such-folder', f), f);
    expect(at({ type: 'social', graph: { file: 'follows.csv' } }, { fileProblem: missing })).toEqual([
      '/states/s/world/graph/file: edge list follows.csv: file not found',
    ]);
    expect(at({ type: 'board', params: { keys: { k: { reducer: 'median' } } } })).toEqual([
      '/states/s/world/params/keys/k/reducer: must be one of "sum", "max", "min", "count", "last", "append"',
    ]);
    expect(at({ type: 'social', params: {}, graph: { generate: { model: 'watts_strogatz', k: 4, beta: 0.1, seed: 2 } } })).toEqual([]);
  });

  it('checks a resolution policy and its priority expression', () => {
    expect(validateResolution({ type: 'shuffle', seed: 3 }, '/states/s/resolution')).toEqual([]);
    expect(validateResolution({ type: 'priority', expr: 'followers > 10 and' }, '/r').map((d) => d.pointer)).toEqual(['/r/expr']);
    expect(validateResolution({ type: 'priority' }, '/r').map((d) => d.message)).toEqual(['missing required key "expr"']);
  });
});

describe('schemas/worlds.schema.json', () => {
  it('is the document src/features/population/worlds/schema.ts builds (the built-in worlds’ own params schemas)', () => {
    const file = JSON.parse(readFileSync('schemas/worlds.schema.json', 'utf8'));
    expect(file).toEqual(JSON.parse(JSON.stringify(worldsSchemaDocument())));
    expect(file.definitions.social_params).toEqual(JSON.parse(JSON.stringify(builtIns().get('social')!.params)));
  });
});
