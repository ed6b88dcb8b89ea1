// Mood: off by default, a seeded random walk pulled by the sentiment of recent thoughts.
import { describe, expect, it } from 'vitest';
import { Run } from '../src/api/engine/run-with-features.js';
import { Mood, moodAt, moodLabel, sentiment } from '../src/features/scientist/mood.js';
import { validateSopDocument } from '../src/api/loader/checked-load.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';

const run = (seed: number, thoughts: string[][] = []) => {
  const m = new Mood({ enabled: true }, seed);
  const values: number[] = [];
  for (let i = 0; i < 20; i++) values.push(m.update(thoughts[i] ?? []));
  return values;
};

describe('mood', () => {
  it('is off by default: no drift and nothing to render', () => {
    const m = new Mood();
    expect(m.update(['everything failed again'])).toBe(0);
    expect(m.view()).toBeUndefined();
  });

  it('is deterministic under a seed and differs between seeds', () => {
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
  });

  it('drifts slowly: each step moves at most by the step size without thoughts', () => {
    const v = run(3);
    let prev = 0;
    for (const x of v) {
      expect(Math.abs(x - prev)).toBeLessThanOrEqual(0.05 + 1e-12);
      prev = x;
    }
    expect(v.some((x) => x !== 0)).toBe(true);
  });

  it('is pulled by the sentiment of recent thoughts', () => {
    const bad = Array.from({ length: 20 }, () => ['the test failed with an error, stuck in a loop again']);
    const good = Array.from({ length: 20 }, () => ['it works: the prediction was confirmed, good progress']);
    const gloomy = run(5, bad).at(-1)!;
    const upbeat = run(5, good).at(-1)!;
    expect(gloomy).toBeLessThan(-0.6);
    expect(upbeat).toBeGreaterThan(0.6);
    expect(moodLabel(gloomy)).toBe('gloomy');
    expect(moodLabel(upbeat)).toBe('upbeat');
    expect(sentiment('confirmed and solved')).toBe(1);
    expect(sentiment('plain words')).toBe(0);
  });

  it('renders into a view and can be saved and restored mid-run', () => {
    const a = new Mood({ enabled: true, initial: 0.3 }, 11);
    expect(a.view()).toEqual({ label: 'content', value: '+0.30' });
    a.update();
    a.update();
    const saved = a.save();
    const next = [a.update(), a.update()];
    const b = new Mood({ enabled: true }, 99);
    b.restore(saved);
    expect([b.update(), b.update()]).toEqual(next);
  });
});

describe('mood at a turn', () => {
  it('is replayed from the seed and the thoughts had so far, the same every time', () => {
    const thoughts = [
      { text: 'the simulation failed again', turn: 2 },
      { text: 'another error, stuck', turn: 5 },
    ];
    expect(moodAt(undefined, 1, 10, thoughts)).toBeUndefined();
    const a = moodAt({ enabled: true }, 4, 12, thoughts);
    expect(moodAt({ enabled: true }, 4, 12, thoughts)).toEqual(a);
    // Thoughts had after the turn do not count yet.
    expect(moodAt({ enabled: true }, 4, 2, thoughts)).toEqual(moodAt({ enabled: true }, 4, 2, []));
    expect(Number(a!.value)).toBeLessThan(Number(moodAt({ enabled: true }, 4, 12, [])!.value));
  });
});

describe('mood in prompts', () => {
  const sop = (mood?: Record<string, unknown>) =>
    validateSopDocument(
      {
        name: 'moody',
        ...(mood ? { mood } : {}),
        environment: { summary: { enabled: false } },
        agents: { Ann: { roles: { talk: 'Speaker' } } },
        root: 'talk',
        states: {
          talk: {
            roles: ['Speaker'],
            environment_prompt: '{{#if mood}}Your mood: {{mood.label}} ({{mood.value}}){{else}}No mood.{{/if}}',
            controller: { max_turns: 6 },
            next_states: { 1: 'end' },
          },
          end: { final: true },
        },
      },
      'moody.sop.json',
    ).sop;
  const moods = async (seed: number, mood?: Record<string, unknown>) => {
    const llm = new ScriptedLlm({ agent: [], judge: [] });
    await new Run({ sop: sop(mood), file: 'moody.sop.json', llm, seed }).run();
    return llm.calls.filter((c) => c.purpose === 'agent').map((c) => c.system.split('\n')[0]);
  };

  it('is off by default and rendered, drifting, when enabled; the same under the same --seed', async () => {
    expect(new Set(await moods(3))).toEqual(new Set(['No mood.']));
    const a = await moods(3, { enabled: true, step: 0.3 });
    expect(a).toHaveLength(6);
    expect(a.every((line) => /^Your mood: (gloomy|uneasy|calm|content|upbeat) \([+-]\d\.\d\d\)$/.test(line!))).toBe(true);
    expect(new Set(a).size).toBeGreaterThan(1);
    expect(await moods(3, { enabled: true, step: 0.3 })).toEqual(a);
    expect(await moods(4, { enabled: true, step: 0.3 })).not.toEqual(a);
  });
});
