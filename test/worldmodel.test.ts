// The world model: hypotheses, predictions and their tests, acceptance into the knowledge
// graph, and falsification removing a statement with its triples.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executor } from '../src/features/scientist/executors/world-model.js';
import { MemoryFiles } from '../src/core/workspace/memory-files.js';
import { execContext } from './helpers/executor-context.js';
import { LocalEmbedder } from '../src/core/memory/local-embedder.js';
import { TextIndex } from '../src/features/scientist/text-index.js';
import { WorldModel } from '../src/features/scientist/worldmodel/model.js';
import { loadWorldModel, parseWorldModel, saveWorldModel } from '../src/features/scientist/worldmodel/persist.js';
import { WorldModelError } from '../src/features/scientist/worldmodel/statement.js';

function acceptedPendulum(m: WorldModel) {
  const s = m.propose(
    'A pendulum 4 times longer swings twice as slowly',
    [
      { subject: 'pendulum period', predicate: 'grows with', object: 'square root of length' },
      { subject: 'Pendulum', predicate: 'is a', object: 'oscillator' },
    ],
    3,
  );
  m.derivePredictions(s.id, ['T(4L)/T(L) = 2 for small swings']);
  m.recordTest(s.id, 1, { method: 'code_run', outcome: 'confirmed', evidence: 'python: ratio 2.000' });
  return m.accept(s.id);
}

describe('world model', () => {
  it('accepts a hypothesis whose predictions were all confirmed; its triples are queryable by entity', () => {
    const m = new WorldModel();
    const s = acceptedPendulum(m);
    expect(s.status).toBe('accepted');
    expect(s.task).toBe(3);
    expect(s.predictions[0]!.test).toEqual({ method: 'code_run', outcome: 'confirmed', evidence: 'python: ratio 2.000' });
    expect(m.about('  PENDULUM ').map((t) => t.object)).toEqual(['oscillator']);
    expect(m.about('square root of length')).toHaveLength(1);
    expect(m.graph.neighbours('oscillator')).toEqual([{ entity: 'Pendulum', predicate: 'is a', direction: 'in' }]);
  });

  it('keeps hypotheses out of the graph and refuses to accept them untested or falsified', () => {
    const m = new WorldModel();
    const h = m.propose('Heavier pendulums swing faster', [{ subject: 'pendulum mass', predicate: 'shortens', object: 'period' }]);
    expect(m.about('period')).toEqual([]);
    expect(() => m.accept(h.id)).toThrow(/cannot be accepted: it has no predictions/);
    m.derivePredictions(h.id, ['a 2 kg bob has a shorter period than a 1 kg bob', 'period depends on mass']);
    m.recordTest(h.id, 1, { method: 'code_run', outcome: 'falsified', evidence: 'both periods 2.006 s' });
    expect(() => m.accept(h.id)).toThrow(/prediction 2 not tested yet/);
    expect(() => m.recordTest(h.id, 2, { method: 'oracle' as never, outcome: 'confirmed', evidence: 'x' })).toThrow(
      /method must be one of knowledge_base, code_run, user, self_reflection/,
    );
    m.recordTest(h.id, 2, { method: 'self_reflection', outcome: 'falsified', evidence: 'mass cancels in the equation of motion' });
    expect(() => m.accept(h.id)).toThrow(/prediction 1, 2 was falsified; reject it/);
    expect(() => m.recordTest(h.id, 1, { method: 'user', outcome: 'confirmed', evidence: 'x' })).toThrow(
      /already tested \(falsified by code_run\)/,
    );
    expect(() => m.recordTest(h.id, 3, { method: 'user', outcome: 'confirmed', evidence: 'x' })).toThrow(
      /has no prediction 3 \(predictions: 1, 2\)/,
    );
    const r = m.reject(h.id, 'prediction 1 falsified by simulation');
    expect(r.status).toBe('rejected');
    expect(m.statements).toEqual([]);
    expect(m.rejected.map((x) => x.reason)).toEqual(['prediction 1 falsified by simulation']);
    expect(() => m.derivePredictions(h.id, ['x'])).toThrow(
      /was rejected \(prediction 1 falsified by simulation\); it is no longer in the world model/,
    );
  });

  it('refuses a prediction already known to be false as confirming a new hypothesis', () => {
    const m = new WorldModel();
    const h = m.propose('Heavier pendulums swing faster', [{ subject: 'pendulum mass', predicate: 'shortens', object: 'period' }]);
    m.derivePredictions(h.id, ['a 2 kg bob has a shorter period than a 1 kg bob']);
    m.recordTest(h.id, 1, { method: 'code_run', outcome: 'falsified', evidence: 'both periods 2.006 s' });
    m.reject(h.id, 'prediction 1 falsified');
    // a new hypothesis reuses the refuted prediction (in other case and spacing) and claims it confirmed
    const again = m.propose('Mass speeds up a pendulum', [{ subject: 'bob mass', predicate: 'speeds up', object: 'pendulum' }]);
    m.derivePredictions(again.id, ['A 2 kg bob has a shorter  period than a 1 kg bob.', 'the period is 2.006 s for L = 1 m']);
    expect(() => m.recordTest(again.id, 1, { method: 'user', outcome: 'confirmed', evidence: 'I think so' })).toThrow(
      /prediction 1 of statement 2 .* is already known to be false: it was falsified as prediction 1 of statement 1 .*\(both periods 2\.006 s\); it cannot confirm a hypothesis/,
    );
    expect(again.predictions[0]!.test).toBeUndefined();
    expect(() => m.accept(again.id)).toThrow(/not tested yet/);
    // recording it falsified is fine, and another prediction can still be confirmed
    m.recordTest(again.id, 2, { method: 'code_run', outcome: 'confirmed', evidence: 'python: 2.006' });
    m.recordTest(again.id, 1, { method: 'code_run', outcome: 'falsified', evidence: 'both periods 2.006 s' });
    expect(() => m.accept(again.id)).toThrow(/prediction 1 was falsified; reject it/);
  });

  it('falsifying an accepted statement removes it and its triples, leaving other statements', async () => {
    const m = new WorldModel();
    const pendulum = acceptedPendulum(m);
    const g = m.propose('Water boils at 100 C at sea level', [{ subject: 'water', predicate: 'boils at', object: '100 C' }]);
    m.derivePredictions(g.id, ['a thermometer in boiling water at sea level reads 100 C']);
    m.recordTest(g.id, 1, { method: 'knowledge_base', outcome: 'confirmed', evidence: 'handbook' });
    m.accept(g.id);
    expect(m.graph.size).toBe(3);
    const index = new TextIndex(new LocalEmbedder());
    expect((await m.search(index, 'pendulum length and period', 1))[0]!.statement.id).toBe(pendulum.id);

    m.reject(pendulum.id, 'large-amplitude swings give a ratio of 2.1');
    expect(m.about('pendulum')).toEqual([]);
    expect(m.about('square root of length')).toEqual([]);
    expect(m.graph.size).toBe(1);
    expect(m.accepted.map((s) => s.id)).toEqual([g.id]);
    expect((await m.search(index, 'pendulum length and period', 5)).map((h) => h.statement.id)).toEqual([g.id]);
    expect(m.rejected[0]!.predictions[0]!.test?.method).toBe('code_run');
  });

  it('persists to world_model.json and rebuilds the graph on load; bad files are pinpointed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'worldmodel-'));
    const file = join(dir, 'world_model.json');
    expect(loadWorldModel(file).statements).toEqual([]);
    const m = new WorldModel();
    acceptedPendulum(m);
    const h = m.propose('b');
    m.reject(h.id, 'withdrawn');
    m.propose('still under test');
    saveWorldModel(file, m);
    const again = loadWorldModel(file);
    expect(again.toJSON()).toEqual(m.toJSON());
    expect(again.about('pendulum')).toHaveLength(1);
    expect(again.propose('next').id).toBe(4);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    doc.statements[0].predictions[0].test.method = 'guess';
    writeFileSync(file, JSON.stringify(doc));
    expect(() => loadWorldModel(file)).toThrow(
      `${file}: /statements/0/predictions/0/test/method: must be one of knowledge_base, code_run, user, self_reflection`,
    );
  });

  it('names the first problem of a hand-edited world model, with its pointer (schemas/worldmodel.schema.json)', () => {
    const st = (o: object = {}) => ({ id: 1, text: 't', status: 'hypothesis', triples: [], predictions: [], ...o });
    const wm = (statements: object[], rejected: object[] = []) => ({ version: 1, next_statement_id: 5, statements, rejected });
    const cases: Array<[unknown, string]> = [
      [null, ': must be an object with statements and rejected'],
      [wm([st({ triples: [{ subject: 's', predicate: 'p' }] })]), '/statements/0/triples/0: must be {subject, predicate, object} strings'],
      [wm([st({ predictions: [{ id: 0, text: 'x' }] })]), '/statements/0/predictions/0: must be {id, text, test?}'],
      [
        wm([st({ predictions: [{ id: 1, text: 'x', test: { method: 'user', evidence: 'e' } }] })]),
        '/statements/0/predictions/0/test/outcome: must be one of confirmed, falsified',
      ],
      [wm([st({ status: 'maybe' })]), '/statements/0/status: must be one of hypothesis, accepted, rejected'],
      [wm([st({ status: 'rejected' })]), '/statements/0/status: a rejected statement belongs in /rejected'],
      [
        wm([st({ status: 'accepted', predictions: [{ id: 1, text: 'x' }] })]),
        '/statements/0/predictions: an accepted statement must have every prediction confirmed',
      ],
      [wm([st()], [st({ status: 'rejected' })]), '/rejected/0/id: statement id 1 is used twice'],
      [wm([st({ id: 5 })]), '/statements/0/id: must be below next_statement_id (5)'],
    ];
    for (const [doc, message] of cases) expect(() => parseWorldModel(doc, 'f')).toThrow(new WorldModelError(`f: ${message}`));
  });
});

describe('world_model executor', () => {
  const sop = { memory_types: { task_board: 'task_board', world_model: 'world_model' } } as never;

  it('challenges a fact before it enters the model, and falsification removes it with its triples', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wm-exec-'));
    const memory = new MemoryFiles({
      dir: join(dir, 'memory'),
      initial: { task_board: '', world_model: '' },
      extensions: { task_board: '.json', world_model: '.json' },
    }).init();
    memory.write(
      'task_board',
      JSON.stringify({
        version: 1,
        next_task_id: 2,
        next_thought_id: 1,
        thoughts: [],
        tasks: [
          {
            id: 1,
            name: 't',
            description: '',
            status: 'in_progress',
            value: 'high',
            tasks_required: [],
            tasks_depending: [],
            origin: { tasks: [], thoughts: [] },
            stream_of_consciousness: [],
          },
        ],
      }),
    );
    const base = execContext({ memory, sop, inputs: {} });
    const run = (op: string, args: Record<string, unknown>) => executor.run(args, { ...base, command: op, settings: { op } });
    const model = () => JSON.parse(readFileSync(join(dir, 'memory', 'world_model.json'), 'utf8'));

    await run('propose', { hypothesis: 'Ice floats on water', triples: 'ice | floats on | water\nice | is less dense than | water' });
    expect(model().statements[0].task).toBe(1);
    await expect(run('accept', { statement: 1 })).rejects.toThrow(/cannot be accepted: it has no predictions/);
    await run('predict', { statement: 1, predictions: '1. an ice cube dropped in a glass stays at the top' });
    await run('test', { statement: 1, prediction: 1, method: 'user', outcome: 'confirmed', evidence: 'the user watched it float' });
    await run('accept', { statement: 1 });
    expect((await run('about', { entity: 'Water' })).result).toBe(
      'Known about "Water":\n- (ice; floats on; water) from statement 1\n- (ice; is less dense than; water) from statement 1',
    );
    await run('reject', { statement: 1, reason: 'heavy ice sinks' });
    expect((await run('about', { entity: 'water' })).result).toBe('Nothing is known about "water".');
    expect(model().statements).toEqual([]);
    expect(model().rejected[0].predictions[0].test.method).toBe('user');

    // A code_run test names code that really ran since the hypothesis was proposed (turn 5 here).
    const ran: Array<{ turn: number; command: string }> = [{ turn: 3, command: 'run_code' }]; // before it: no evidence
    const at = (turn: number) => (op: string, args: Record<string, unknown>) =>
      executor.run(args, { ...base, turn, command: op, settings: { op }, codeRuns: () => ran });
    await at(5)('propose', { hypothesis: 'Water boils at 100 C at sea level' });
    expect(model().statements[0].proposed_turn).toBe(5);
    await at(6)('predict', { statement: 2, predictions: 'a simulation gives 100 C\na second one too' });
    const claim = { statement: 2, prediction: 1, method: 'code_run', outcome: 'confirmed', evidence: 'the simulation said 100 C' };
    await expect(at(7)('test', claim)).rejects.toThrow(
      'a code_run test needs code that really ran: no code has run since hypothesis 2 was proposed; run the code first, then record its test',
    );
    ran.push({ turn: 7, command: 'run_code' });
    await expect(at(8)('test', { ...claim, code_turn: 6 })).rejects.toThrow(
      /no code ran at turn 6 since hypothesis 2 was proposed \(code ran at turn 7\)/,
    );
    expect((await at(8)('test', claim)).result).toMatch(/^Prediction 1 of hypothesis 2 confirmed by code_run \(run_code at turn 7\)\./);
    expect(model().statements[0].predictions[0].test).toEqual({
      method: 'code_run',
      outcome: 'confirmed',
      evidence: 'the simulation said 100 C',
      code_run: { turn: 7, command: 'run_code' },
    });
  });
});

describe('the scientist revisits the world model when it reflects', () => {
  it('its reflect state may look facts up and withdraw an accepted one (world_model reject)', () => {
    const sop = JSON.parse(readFileSync('sops/scientist.sop.json', 'utf8')) as {
      states: Record<
        string,
        { commands: Record<string, { executor: string; settings: { op: string } }>; components: Record<string, { task: string }> }
      >;
    };
    const reflect = sop.states.reflect!;
    expect(reflect.commands.withdraw_fact).toMatchObject({ executor: 'world_model', settings: { op: 'reject' } });
    expect(reflect.commands.search_facts).toMatchObject({ executor: 'world_model', settings: { op: 'search' } });
    expect(reflect.components.Reflector!.task).toContain('withdraw it with withdraw_fact');
  });
});
