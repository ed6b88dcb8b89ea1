// The viewer's sweep bands, network data and agent histograms (src/apps/view/sweep.ts, network.ts)
// as pure functions of journal events: the quantiles of a band, and hostile names from run data
// (a metric, an arm, a target's source, an agent's id or attribute) shown as text, never as markup.
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../src/core/runtime/events.js';
import { agentStates, histogramsHtml, networkHtml, scriptJson } from '../src/apps/view/network.js';
import { metricBands, quantile, sweepHtml } from '../src/apps/view/sweep.js';

const EVIL = '<img src=x onerror=alert(1)></script><script>alert(2)</script>';

function run(values: number[], metric = 'infected', targets: object = {}): RunEvent[] {
  const started = { type: 'run_started', document: { states: { s: { population: {} } }, targets } } as unknown as RunEvent;
  const steps = values.map(
    (v, i) =>
      ({
        type: 'population_step',
        state: 's',
        visit: 1,
        step: i + 1,
        turn: i + 1,
        clock: '00:00',
        minute: i,
        active: 1,
        actions: [{ agent: i % 2 ? EVIL : 'a', name: i % 2 ? EVIL : 'catch', args: {}, ok: true, output: '', tier: 'rule' }],
        metrics: { [metric]: v },
      }) as unknown as RunEvent,
  );
  return [started, ...steps];
}

describe('sweep bands', () => {
  it('gives the median and the 5 to 95% range at each step, a run that ended keeping its last value', () => {
    expect(quantile([1, 2, 3, 4, 5], 0.5)).toBe(3);
    expect(quantile([0, 10], 0.05)).toBeCloseTo(0.5, 9);
    const runs = [
      { arm: '', events: run([1, 2, 3]) },
      { arm: '', events: run([3, 4]) },
      { arm: '', events: run([5, 6, 7]) },
    ];
    const [m] = metricBands(runs);
    expect(m!.bands).toHaveLength(1);
    expect(m!.bands[0]!.points.map((p) => p.median)).toEqual([3, 4, 4]); // step 3: 3, 4 (kept), 7
    expect(m!.bands[0]!.points[2]!.lo).toBeCloseTo(3.1, 9);
    expect(m!.bands[0]!.points[2]!.hi).toBeCloseTo(6.7, 9);
  });

  it('shows hostile metric, arm and target text as text', () => {
    const targets = {
      t1: { metric: EVIL, value: 2, tolerance: 1, source: EVIL },
      t2: { query: EVIL, kind: 'effect', arms: [EVIL, 'b'], source: EVIL },
    };
    const html = sweepHtml([
      { arm: EVIL, events: run([1, 2], EVIL, targets) },
      { arm: 'b', events: run([2, 3], EVIL, targets) },
    ]);
    expect(html).not.toMatch(/<img|<script/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(html).toContain('data-target="t1"');
  });
});

describe('network data and histograms', () => {
  it('keeps each agent at its last action up to each step, and writes JSON no script element can end', () => {
    const events = run([1, 2, 3]);
    const { states, changes } = agentStates(events, 's', ['a', EVIL]);
    expect(states).toEqual(['none', 'catch', EVIL]);
    expect(changes).toEqual([[[0, 1]], [[1, 2]], []]);
    const json = scriptJson({ ids: [EVIL, '\u2028'] });
    expect(json).not.toMatch(/[<\u2028]/);
    expect(JSON.parse(json)).toEqual({ ids: [EVIL, '\u2028'] });
    const net = { state: EVIL, ids: ['a', EVIL], x: [0, 1], y: [0, 1], edges: [[0, 1]] as Array<[number, number]>, states, changes };
    const html = networkHtml(net, 'tok');
    expect(html.replace(/<script type="application\/json"[\s\S]*?<\/script>/, '')).not.toMatch(/<img|<script>alert/);
    const hist = histogramsHtml(
      {
        columns: [
          { name: 'state', type: 'VARCHAR' },
          { name: 'id', type: 'VARCHAR' },
          { name: EVIL, type: 'VARCHAR' },
        ],
        rows: [
          ['s', 'a', EVIL],
          ['s', EVIL, 'x'],
        ],
        warnings: [],
        missing: [],
      },
      net,
    );
    expect(hist).not.toMatch(/<img|<script/);
    expect(hist).toContain('state at the end');
  });
});
