// The step's plan is pure (src/core/runtime/plan.ts): where the run goes, whether it ends, who acts,
// from the position, the resolved SOP and the controller's answers, with no LLM and no run. And
// the hook composers (src/core/runtime/compose.ts) keep their declared rules and name a failing plugin.
import { describe, expect, it } from 'vitest';
import { EngineError, RunSignal } from '../src/shared/errors.js';
import { decide, observe, PluginHookError, transform } from '../src/core/runtime/compose.js';
import { freshStateRuntime, type StateRuntime } from '../src/core/runtime/controller.js';
import { definePlugin, type RunPlugin } from '../src/core/runtime/hooks.js';
import { arrive, ASK_JUDGE, routed, ruledMove, start, turnTaken } from '../src/core/runtime/plan.js';
import type { RunPosition } from '../src/core/runtime/position.js';
import { CLEAN_SEMANTICS } from '../src/core/runtime/semantics.js';
import { semanticsFor } from '../src/features/agents-v1/compat/agents-v1/semantics.js';
import type { RunContext } from '../src/core/runtime/context.js';
import { resolveSop } from '../src/format/sop/resolved.js';
import type { Sop } from '../src/format/sop/types.js';

const sop = {
  name: 'plan',
  agents: { Ann: { roles: { talk: 'A', vote: 'V' } }, Bo: { roles: { talk: 'B' } } },
  root: 'talk',
  states: {
    talk: {
      roles: ['A', 'B'],
      begin_role: 'A',
      begin_query: 'Hello.',
      controller: { type: 'order', max_turns: 3 },
      next_states: { '0': 'talk', '1': 'vote', '2': 'end' },
    },
    vote: { roles: ['V'], next_states: { '0': 'talk' } },
    end: { final: true },
  },
} as unknown as Sop;
const resolved = resolveSop(sop);

function position(): RunPosition {
  const states: Record<string, StateRuntime> = {};
  for (const s of Object.values(resolved.states)) states[s.name] = freshStateRuntime(s.roles, s.beginRole);
  return { current: 'talk', turn: 0, states, rng: 1, started: false };
}

describe('the plan of a step is a pure function', () => {
  it('starts at the root: its begin role acts, the position it was given is left as it was', () => {
    const before = position();
    const a = start(before, resolved);
    expect(a.kind).toBe('begin');
    if (a.kind !== 'begin') return;
    expect(a.step).toMatchObject({ role: 'A', agent: 'Ann', begin: true });
    expect(a.position.started).toBe(true);
    expect(a.position.states.talk!.visits).toBe(1);
    expect(a.events.map((e) => e.type)).toEqual(['state_entered', 'speaker_chosen']);
    expect(before.started).toBe(false);
    expect(before.states.talk!.visits).toBe(0);
  });

  it('asks the judge only when no rule decides: max_turns moves on by next_states["1"], a lone "0" moves at once', () => {
    const talk = resolved.states.talk!;
    const rt = { ...freshStateRuntime(talk.roles, talk.beginRole), chatNums: 1 };
    expect(ruledMove(talk, rt, undefined)).toBe(ASK_JUDGE);
    expect(ruledMove(talk, { ...rt, chatNums: 3 }, undefined)).toEqual({ target: 'vote', reason: 'max_turns' });
    expect(ruledMove(resolved.states.vote!, freshStateRuntime(['V'], undefined), undefined)).toEqual({ target: 'talk', reason: 'direct' });
    // a plugin's transition (a command state's finish) wins over the rules
    expect(ruledMove(talk, rt, { target: 'end', reason: 'finish' })).toEqual({ target: 'end', reason: 'finish' });
  });

  it('a move to a final state finishes the run; staying routes within the state', () => {
    const p = { ...position(), started: true };
    const end = arrive(p, resolved, { target: 'end', reason: 'judge' }, CLEAN_SEMANTICS);
    expect(end).toMatchObject({ kind: 'finished', state: 'end' });
    expect(end.events).toEqual([{ type: 'state_entered', state: 'end', from: 'talk', turn: 0, reason: 'judge' }]);
    expect(arrive(p, resolved, { target: 'talk', reason: 'judge' }, CLEAN_SEMANTICS).kind).toBe('route');
  });

  it('a new visit starts afresh, unless the semantics keep the counters (Agents 1.0)', () => {
    const p = { ...position(), started: true, current: 'vote' };
    p.states.talk = { begun: true, chatNums: 3, index: 1, currentRole: 'B', visits: 1 };
    const clean = arrive(p, resolved, { target: 'talk', reason: 'direct' }, CLEAN_SEMANTICS);
    expect(clean.kind).toBe('begin');
    expect(clean.position.states.talk).toMatchObject({ begun: false, chatNums: 0, visits: 2 });
    const v1 = arrive(p, resolved, { target: 'talk', reason: 'direct' }, semanticsFor('agents-v1'));
    expect(v1.kind).toBe('route');
    expect(v1.position.states.talk).toMatchObject({ begun: true, chatNums: 3, visits: 1 });
  });

  it('the routed step names the picked role and its agent; taking the turn moves both counters', () => {
    const p = { ...position(), started: true };
    const r = routed(p, resolved.states.talk!, 'B', 'order', 42);
    expect(r.step).toEqual({ state: resolved.states.talk, role: 'B', agent: 'Bo', begin: false });
    expect(r.position).toMatchObject({ rng: 42, states: { talk: { currentRole: 'B' } } });
    expect(r.events).toEqual([{ type: 'speaker_chosen', state: 'talk', agent: 'Bo', role: 'B', turn: 1, how: 'order' }]);
    const t = turnTaken(r.position, 'talk');
    expect(t.turn).toBe(1);
    expect(t.states.talk).toMatchObject({ chatNums: 1, begun: true });
    expect(r.position.turn).toBe(0);
  });
});

describe('hooks are composed by their declared rules', () => {
  const a: RunPlugin = { name: 'a', transit: () => undefined, context: (c) => ({ ...c, a: 1 }), afterMessage: () => {} };
  const b: RunPlugin = { name: 'b', transit: () => ({ target: 'x', reason: 'direct' }), context: (c) => ({ ...c, b: c.a }) };
  const c: RunPlugin = { name: 'c', transit: () => ({ target: 'y', reason: 'direct' }) };

  it('decide: the first answer wins; transform: each gets what the one before returned', () => {
    const state = resolved.states.talk!;
    expect(decide([a, b, c], 'transit', state, freshStateRuntime(['A'], undefined))).toEqual({ target: 'x', reason: 'direct' });
    expect(transform([a, b], 'context', { base: true })).toEqual({ base: true, a: 1, b: 1 });
  });

  it('a hook that fails unexpectedly is named in the error; engine errors and run signals pass through', () => {
    const broken: RunPlugin = {
      name: 'broken',
      afterMessage: () => {
        throw new TypeError('x is undefined');
      },
    };
    const message = { id: 0, turn: 1, state: 's', sender: 'Ann', role: 'A', content: 'hi', kind: 'speech' as const, timestamp: '' };
    expect(() => observe([a, broken], 'afterMessage', message)).toThrow(PluginHookError);
    expect(() => observe([a, broken], 'afterMessage', message)).toThrow('plugin "broken" failed in afterMessage: x is undefined');
    const signal = new RunSignal('stop', 'budget spent', { status: 'budget' });
    const engine = new EngineError('refused', 'ACTION');
    for (const err of [signal, engine]) {
      const p: RunPlugin = {
        name: 'p',
        afterMessage: () => {
          throw err;
        },
      };
      expect(() => observe([p], 'afterMessage', message)).toThrow(err);
    }
  });

  it('definePlugin: a plugin is made only for a SOP that uses it, and its missing hooks pass through', () => {
    const make = definePlugin({ name: 'votes', uses: (s) => 'vote' in s.states, make: () => ({ context: (x) => ({ ...x, votes: 0 }) }) });
    const ctx = (s: Sop) => ({ sop: s }) as RunContext;
    const plugin = make(ctx(sop));
    expect(plugin?.name).toBe('votes');
    expect(make(ctx({ ...sop, states: { talk: sop.states.talk! } }))).toBeUndefined();
    expect(transform([plugin!], 'view', { summary: 's', relevant: [], window: [] }, resolved.states.talk!, 0)).toEqual({
      summary: 's',
      relevant: [],
      window: [],
    });
  });
});
