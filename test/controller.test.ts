// The controller rules of the run loop (docs/agents-v1-semantics.md §3.3-3.6 and §5), driven by a scripted LLM.
import { describe, expect, it } from 'vitest';
import { ListEnvironment } from '../src/core/environment/environment.js';
import type { Message } from '../src/core/environment/message.js';
import { Run, type RunOptions } from '../src/api/engine/run-with-features.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { validateSopDocument } from '../src/api/loader/checked-load.js';
import type { Sop } from '../src/format/sop/types.js';
import { ScriptedLlm, type Script } from './helpers/scripted-llm.js';

const AGENTS3 = {
  Ann: { roles: { talk: 'RA' } },
  Ben: { roles: { talk: 'RB' } },
  Cat: { roles: { talk: 'RC' } },
};

/** One talking state with roles RA, RB, RC (Ann, Ben, Cat) and a way to the final state. */
function talkSop(state: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown {
  return {
    name: 'test',
    agents: AGENTS3,
    root: 'talk',
    states: {
      talk: { roles: ['RA', 'RB', 'RC'], next_states: { '0': 'talk', '1': 'end' }, ...state },
      end: { final: true },
    },
    ...extra,
  };
}

interface Outcome {
  result: Awaited<ReturnType<Run['run']>>;
  events: RunEvent[];
  llm: ScriptedLlm;
  run: Run;
  /** "state:role" of every recorded message. */
  speakers: string[];
  messages: readonly Message[];
  warnings: string[];
}

async function play(doc: unknown, script: Script = {}, options: Partial<RunOptions> & { raw?: boolean } = {}): Promise<Outcome> {
  const { raw, ...rest } = options;
  const sop = raw ? (doc as Sop) : validateSopDocument(doc, 'test.sop.json').sop;
  const llm = new ScriptedLlm(script);
  const events: RunEvent[] = [];
  const run = new Run({ sop, file: 'test.sop.json', llm, listeners: [(e) => events.push(e)], ...rest });
  const result = await run.run();
  if (result.error) throw result.error;
  return {
    result,
    events,
    llm,
    run,
    speakers: result.messages.map((m) => `${m.state}:${m.role}`),
    messages: result.messages,
    warnings: events.flatMap((e) => (e.type === 'warning' ? [e.message] : [])),
  };
}

const roles = (o: Outcome) => o.messages.map((m) => m.role);

describe('speaker order', () => {
  it('starts with begin_role and continues with its successor in list order', async () => {
    const o = await play(talkSop({ begin_role: 'RB', begin_query: 'Welcome.' }), {}, { maxTurns: 7 });
    expect(roles(o)).toEqual(['RB', 'RC', 'RA', 'RB', 'RC', 'RA', 'RB']);
    expect(o.messages.map((m) => m.sender)).toEqual(['Ben', 'Cat', 'Ann', 'Ben', 'Cat', 'Ann', 'Ben']);
    expect(o.result.status).toBe('max_turns');
    // The begin turn goes to begin_role without a judge or speaker call before it.
    expect(o.llm.calls[0]!.purpose).toBe('judge');
    expect(o.llm.calls[0]!.meta.turn).toBe(1);
    expect(o.llm.of('speaker')).toHaveLength(0);
  });

  it('without begin_role goes RA, RB, RC, RA', async () => {
    const o = await play(talkSop({}), {}, { maxTurns: 5 });
    expect(roles(o)).toEqual(['RA', 'RB', 'RC', 'RA', 'RB']);
  });

  it('a single role speaks every turn with no speaker call', async () => {
    const doc = {
      name: 'solo',
      agents: { Ann: { roles: { s: 'RA' } } },
      root: 's',
      states: { s: { roles: ['RA'], controller: { type: 'rule' }, next_states: { '0': 's', '1': 'end' } }, end: { final: true } },
    };
    const o = await play(doc, {}, { maxTurns: 3 });
    expect(roles(o)).toEqual(['RA', 'RA', 'RA']);
    expect(o.llm.of('speaker')).toHaveLength(0);
  });
});

describe('random controller', () => {
  const doc = talkSop({ controller: { type: 'random' } });
  const sequence = async (seed: number) => roles(await play(doc, {}, { maxTurns: 30, seed }));

  it('gives the same sequence for the same seed, picks only known roles, and may repeat a speaker', async () => {
    const a = await sequence(7);
    const b = await sequence(7);
    expect(a).toEqual(b);
    expect(a[0]).toBe('RA'); // the begin turn is roles[0], not drawn
    expect(new Set(a)).toEqual(new Set(['RA', 'RB', 'RC']));
    expect(a.slice(1).some((r, i) => r === a[i])).toBe(true);
  });

  it('draws differently for different seeds', async () => {
    const runs = await Promise.all([1, 2, 3, 4].map(sequence));
    expect(new Set(runs.map((r) => r.join(','))).size).toBeGreaterThan(1);
  });

  it('with repeat: false never gives the floor to the role that spoke last', async () => {
    const noRepeat = talkSop({ controller: { type: 'random', repeat: false } });
    for (const seed of [1, 2, 3, 7]) {
      const seq = roles(await play(noRepeat, {}, { maxTurns: 30, seed }));
      expect(
        seq.slice(1).filter((r, i) => r === seq[i]),
        seq.join(','),
      ).toEqual([]);
      expect(new Set(seq)).toEqual(new Set(['RA', 'RB', 'RC']));
    }
    // seeded as before: the same seed, the same sequence
    expect(roles(await play(noRepeat, {}, { maxTurns: 30, seed: 5 }))).toEqual(roles(await play(noRepeat, {}, { maxTurns: 30, seed: 5 })));
  });
});

describe('rule controller', () => {
  const doc = talkSop({
    controller: { type: 'rule', speaker: { system_prompt: 'Pick whoever was asked a question.' } },
    begin_role: 'RA',
    begin_query: 'Hi all.',
  });

  it('lets the speaker call choose the next role', async () => {
    const o = await play(doc, { speaker: ['<end>RC</end>', 'I pick <end>RB</end> now'] }, { maxTurns: 3 });
    expect(roles(o)).toEqual(['RA', 'RC', 'RB']);
    expect(o.warnings).toEqual([]);
    const call = o.llm.of('speaker')[0]!;
    expect(call.system).toContain('Pick whoever was asked a question.');
    for (const r of ['RA', 'RB', 'RC']) expect(call.system).toContain(`<end>${r}</end>`);
    expect(call.last).toContain('Ann');
    expect(call.stream).toBe(false);
  });

  it('falls back to a seeded random role, with a warning, on an unknown role or no tag', async () => {
    const script = { speaker: ['<end>Zed</end>', 'no idea', '<end></end>'] };
    const a = await play(doc, script, { maxTurns: 4, seed: 3 });
    const b = await play(doc, script, { maxTurns: 4, seed: 3 });
    expect(roles(a)).toEqual(roles(b));
    expect(
      roles(a)
        .slice(1)
        .every((r) => ['RA', 'RB', 'RC'].includes(r)),
    ).toBe(true);
    expect(a.warnings).toHaveLength(3);
    expect(a.warnings[0]).toMatch(/named no known role/);
    const how = a.events.flatMap((e) => (e.type === 'speaker_chosen' ? [e.how] : []));
    expect(how).toEqual(['begin', 'rule_fallback', 'rule_fallback', 'rule_fallback']);
  });
});

describe('transitions', () => {
  it('after max_turns moves to next_states["1"] without a judge call', async () => {
    const o = await play(talkSop({ controller: { max_turns: 3 } }), { judge: ['0', '0', '0', '0'] });
    expect(o.result.status).toBe('finished');
    expect(o.result.finalState).toBe('end');
    expect(o.messages).toHaveLength(3);
    expect(o.llm.of('judge')).toHaveLength(2); // after turns 1 and 2; turn 3 reaches max_turns
    const entered = o.events.filter((e) => e.type === 'state_entered');
    expect(entered.at(-1)).toMatchObject({ state: 'end', from: 'talk', reason: 'max_turns' });
  });

  it.each([
    ['1', 'end'],
    ['<end>1</end>', 'end'],
    ['I think so. <end>1</end>', 'end'],
    [' 1\n', 'talk'],
    ['maybe', 'talk'],
    ['', 'talk'],
    ['<end>yes</end>', 'talk'],
    ['<end>1</end><end>0</end>', 'talk'],
  ])('judge reply %j leads to %s', async (reply, target) => {
    const o = await play(talkSop({}), { judge: [reply] }, { maxTurns: 2 });
    const judge = o.events.find((e) => e.type === 'judge');
    expect(judge).toMatchObject({ state: 'talk', target });
    if (target === 'end') {
      expect(o.result).toMatchObject({ status: 'finished', finalState: 'end', turns: 1 });
    } else {
      expect(o.result).toMatchObject({ status: 'max_turns', turns: 2 });
      expect(o.speakers).toEqual(['talk:RA', 'talk:RB']);
    }
  });

  it('honours a custom judge extract_word and only that tag', async () => {
    const doc = talkSop({ controller: { judge: { extract_word: 'decision' } } });
    const moved = await play(doc, { judge: ['<decision>1</decision>'] }, { maxTurns: 3 });
    expect(moved.result).toMatchObject({ status: 'finished', turns: 1 });
    const stayed = await play(doc, { judge: ['<end>1</end>'] }, { maxTurns: 2 });
    expect(stayed.result).toMatchObject({ status: 'max_turns', turns: 2 });
    expect(moved.llm.of('judge')[0]!.system).toContain('<decision>');
    expect(moved.llm.of('judge')[0]!.meta.extractWord).toBe('decision');
  });

  it('a judge key without a transition stays, with a warning', async () => {
    const o = await play(talkSop({}), { judge: ['<end>2</end>'] }, { maxTurns: 2 });
    expect(o.speakers).toEqual(['talk:RA', 'talk:RB']);
    expect(o.events.find((e) => e.type === 'judge')).toMatchObject({ key: '2', target: 'talk', fallback: true });
    expect(o.warnings.join('\n')).toMatch(/"2".*no transition/);
  });

  it('a state whose only successor is "0" never calls the judge', async () => {
    const doc = {
      name: 'chain',
      agents: { Ann: { roles: { a: 'RA', b: 'RA' } }, Ben: { roles: { a: 'RB', b: 'RB' } } },
      root: 'a',
      states: {
        a: { roles: ['RA', 'RB'], controller: { max_turns: 1 }, next_states: { '0': 'b' } },
        b: { roles: ['RA', 'RB'], next_states: { '0': 'end' } },
        end: { final: true },
      },
    };
    const o = await play(doc);
    expect(o.speakers).toEqual(['a:RA', 'b:RA']);
    expect(o.result).toMatchObject({ status: 'finished', finalState: 'end' });
    expect(o.llm.of('judge')).toHaveLength(0);

    // With itself as the only successor the state loops until the global guard.
    const loop = {
      name: 'loop',
      agents: AGENTS3,
      root: 'talk',
      states: { talk: { roles: ['RA', 'RB', 'RC'], controller: { max_turns: 2 }, next_states: { '0': 'talk' } } },
    };
    const l = await play(loop, {}, { raw: true, maxTurns: 6 });
    expect(l.result).toMatchObject({ status: 'max_turns', turns: 6 });
    expect(l.llm.of('judge')).toHaveLength(0);
  });

  it('entering a final state ends the run; its agents never speak', async () => {
    const doc = {
      name: 'fin',
      root: 'talk',
      agents: { Ann: { roles: { talk: 'RA', end: 'Closer' } }, Ben: { roles: { talk: 'RB' } } },
      states: {
        talk: { roles: ['RA', 'RB'], next_states: { '0': 'talk', '1': 'end' } },
        end: { final: true, roles: ['Closer'], components: { Closer: { task: 'never used' } } },
      },
    };
    const o = await play(doc, { judge: ['0', '1'] }, { maxTurns: 50 });
    expect(o.result).toMatchObject({ status: 'finished', finalState: 'end', turns: 2 });
    expect(o.llm.calls.map((c) => c.purpose)).toEqual(['agent', 'judge', 'agent', 'judge']);
    expect(o.events.at(-1)).toMatchObject({ type: 'run_finished', status: 'finished', final_state: 'end' });
  });

  it('a final root ends the run before any turn', async () => {
    const doc = { name: 'f', agents: { Ann: { roles: {} } }, root: 'end', states: { end: { final: true } } };
    const o = await play(doc);
    expect(o.result).toMatchObject({ status: 'finished', finalState: 'end', turns: 0 });
    expect(o.llm.calls).toHaveLength(0);
  });

  it('the global maxTurns guard stops a run that never reaches a final state', async () => {
    const o = await play(talkSop({}), {}, { maxTurns: 4 });
    expect(o.result).toMatchObject({ status: 'max_turns', turns: 4 });
    expect(o.messages).toHaveLength(4);
    expect(o.events.at(-1)).toMatchObject({ type: 'run_finished', status: 'max_turns', turns: 4 });
  });
});

describe('begin turns', () => {
  it('begin_query is emitted verbatim without an LLM call', async () => {
    const query = '  Ben: opening {x} <end>1</end> ';
    const o = await play(talkSop({ begin_role: 'RB', begin_query: query }), {}, { maxTurns: 2 });
    expect(o.messages[0]).toMatchObject({ sender: 'Ben', role: 'RB', content: query, kind: 'begin', turn: 1 });
    const agentCalls = o.llm.of('agent');
    expect(agentCalls.map((c) => c.meta.agent)).toEqual(['Cat']);
    expect(agentCalls[0]!.meta.turn).toBe(2);
  });

  it('renders inputs in begin_query', async () => {
    const doc = talkSop(
      { begin_role: 'RA', begin_query: 'Topic: {{inputs.topic}}; goal: {{goal}}' },
      {
        inputs: { topic: { default: 'tides' }, goal: {} },
      },
    );
    const o = await play(doc, {}, { maxTurns: 1, inputs: { goal: 'agree' } });
    expect(o.messages[0]!.content).toBe('Topic: tides; goal: agree');
    expect(o.llm.of('agent')).toHaveLength(0);
  });

  it('without an explicit begin_role, roles[0] opens with an LLM call', async () => {
    const o = await play(talkSop({}), { agent: ['Ann: Good morning.'] }, { maxTurns: 1 });
    expect(o.llm.calls).toHaveLength(1);
    expect(o.llm.calls[0]!.meta).toMatchObject({ purpose: 'agent', agent: 'Ann', role: 'RA', turn: 1 });
    expect(o.messages[0]).toMatchObject({ sender: 'Ann', role: 'RA', content: 'Good morning.', kind: 'speech' });
  });

  it('an explicit begin_role without begin_query: LLM call (clean) or a single space (agents-v1)', async () => {
    const doc = talkSop({ begin_role: 'RC' });
    const clean = await play(doc, { agent: ['Cat opens'] }, { maxTurns: 1 });
    expect(clean.messages[0]).toMatchObject({ sender: 'Cat', content: 'Cat opens' });
    expect(clean.llm.of('agent')).toHaveLength(1);
    const compat = await play(doc, {}, { maxTurns: 1, compat: 'agents-v1' });
    expect(compat.messages[0]).toMatchObject({ sender: 'Cat', content: ' ', kind: 'begin' });
    expect(compat.llm.calls).toHaveLength(0);
  });

  it('agent calls stream, controller calls do not', async () => {
    const o = await play(talkSop({ controller: { type: 'rule' } }), {}, { maxTurns: 3 });
    expect(o.llm.of('agent').every((c) => c.stream)).toBe(true);
    expect([...o.llm.of('judge'), ...o.llm.of('speaker')].every((c) => !c.stream)).toBe(true);
    const deltas = o.events.flatMap((e) => (e.type === 'delta' ? [e.text] : []));
    expect(deltas.join('')).toBe(o.messages.map((m) => m.content).join(''));
  });
});

describe('re-entering a state', () => {
  // a (RA, RB; begins with a query) hosts 2 turns, then b (RC) 1 turn, then back to a, ...
  const doc = {
    name: 'cycle',
    root: 'a',
    agents: { Ann: { roles: { a: 'RA' } }, Ben: { roles: { a: 'RB' } }, Cat: { roles: { b: 'RC' } } },
    states: {
      a: {
        roles: ['RA', 'RB'],
        begin_role: 'RA',
        begin_query: 'A begins',
        controller: { max_turns: 2 },
        next_states: { '0': 'a', '1': 'b', '2': 'end' },
      },
      b: { roles: ['RC'], begin_role: 'RC', begin_query: 'B begins', controller: { max_turns: 1 }, next_states: { '0': 'b', '1': 'a' } },
      end: { final: true },
    },
  };

  it('clean mode: every visit starts with a begin turn and fresh counters', async () => {
    const o = await play(doc, {}, { maxTurns: 7 });
    expect(o.speakers).toEqual(['a:RA', 'a:RB', 'b:RC', 'a:RA', 'a:RB', 'b:RC', 'a:RA']);
    expect(o.messages.map((m) => m.kind)).toEqual(['begin', 'speech', 'begin', 'begin', 'speech', 'begin', 'begin']);
    expect(o.messages[3]!.content).toBe('A begins');
    // One judge call per visit of a (after its begin turn); b always leaves by max_turns.
    expect(o.llm.of('judge').map((c) => c.meta.state)).toEqual(['a', 'a']);
    expect(o.run.position.states.a!.visits).toBe(3);
    expect(o.run.position.states.b!.visits).toBe(2);
  });

  it('compat agents-v1: no begin turn on re-entry, counters and rotation continue', async () => {
    const o = await play(doc, {}, { maxTurns: 7, compat: 'agents-v1' });
    expect(o.speakers).toEqual(['a:RA', 'a:RB', 'b:RC', 'a:RA', 'b:RC', 'a:RB', 'b:RC']);
    expect(o.messages.map((m) => m.kind)).toEqual(['begin', 'speech', 'begin', 'speech', 'speech', 'speech', 'speech']);
    // chat_nums of a is already at max_turns on re-entry: no judge call after the first visit.
    expect(o.llm.of('judge')).toHaveLength(1);
  });
});

describe('visibility', () => {
  // s1 (RA, RB) for two turns, then s2 (RA, RB).
  const doc = (type: 'cooperative' | 'competitive') => ({
    name: 'vis',
    root: 's1',
    environment: { type, max_chat_history: 50 },
    agents: { Ann: { roles: { s1: 'RA', s2: 'RA' } }, Ben: { roles: { s1: 'RB', s2: 'RB' } } },
    states: {
      s1: {
        roles: ['RA', 'RB'],
        begin_role: 'RA',
        begin_query: 'SECRET of s1',
        controller: { max_turns: 2 },
        next_states: { '0': 's1', '1': 's2' },
      },
      s2: { roles: ['RA', 'RB'], begin_role: 'RA', begin_query: 'Public s2 opening', next_states: { '0': 's2', '1': 'end' } },
      end: { final: true },
    },
  });

  it('competitive: agents see only the current state; cooperative: everything', async () => {
    const comp = await play(doc('competitive'), {}, { maxTurns: 4 });
    const coop = await play(doc('cooperative'), {}, { maxTurns: 4 });
    const inS2 = (o: Outcome) => o.llm.of('agent').find((c) => c.meta.state === 's2')!;
    const text = (o: Outcome) =>
      inS2(o)
        .messages.map((m) => m.content)
        .join('\n');
    expect(text(comp)).toContain('Public s2 opening');
    expect(text(comp)).not.toContain('SECRET of s1');
    expect(text(coop)).toContain('Public s2 opening');
    expect(text(coop)).toContain('SECRET of s1');

    // The environment's visible() follows the same rule after the run.
    expect(comp.run.env.visible().map((m) => m.state)).toEqual(['s2', 's2']);
    expect(coop.run.env.visible().map((m) => m.state)).toEqual(['s1', 's1', 's2', 's2']);
  });

  it('ListEnvironment.visible() and view() apply the rule and the window', async () => {
    const mk = (id: number, state: string): Message => ({
      id,
      turn: id + 1,
      state,
      sender: 'Ann',
      role: 'RA',
      content: `m${id}`,
      kind: 'speech',
      timestamp: '',
    });
    for (const [type, expected] of [
      ['competitive', ['m2', 'm3']],
      ['cooperative', ['m0', 'm1', 'm2', 'm3']],
    ] as const) {
      const env = new ListEnvironment(type);
      await env.add(mk(0, 'x'));
      await env.add(mk(1, 'x'));
      env.stateStart = 2;
      await env.add(mk(2, 'y'));
      await env.add(mk(3, 'y'));
      expect(env.visible().map((m) => m.content)).toEqual(expected);
      const view = await env.view({ window: 1, topK: 0 });
      expect(view.window.map((m) => m.content)).toEqual(['m3']);
    }
  });
});
