// Mood: off by default, a seeded random walk pulled by the sentiment of recent thoughts.
import { describe, expect, it } from 'vitest';
import { Mood, moodLabel, sentiment } from '../src/scientist/mood.js';

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
    for (const x of v) { expect(Math.abs(x - prev)).toBeLessThanOrEqual(0.05 + 1e-12); prev = x; }
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
    a.update(); a.update();
    const saved = a.save();
    const next = [a.update(), a.update()];
    const b = new Mood({ enabled: true }, 99);
    b.restore(saved);
    expect([b.update(), b.update()]).toEqual(next);
  });
});

describe('mood at a turn', () => {
  it('is replayed from the seed and the thoughts had so far, the same every time', async () => {
    const { moodAt } = await import('../src/scientist/mood.js');
    const thoughts = [{ text: 'the simulation failed again', turn: 2 }, { text: 'another error, stuck', turn: 5 }];
    expect(moodAt(undefined, 1, 10, thoughts)).toBeUndefined();
    const a = moodAt({ enabled: true }, 4, 12, thoughts);
    expect(moodAt({ enabled: true }, 4, 12, thoughts)).toEqual(a);
    // Thoughts had after the turn do not count yet.
    expect(moodAt({ enabled: true }, 4, 2, thoughts)).toEqual(moodAt({ enabled: true }, 4, 2, []));
    expect(Number(a!.value)).toBeLessThan(Number(moodAt({ enabled: true }, 4, 12, [])!.value));
  });
});
