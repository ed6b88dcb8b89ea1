// The population SOP of the batch mode tests: the social-spread example with AGENTS sampled
// agents, each deciding by its own LLM call every step, for STEPS steps.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const AGENTS = 12;
export const STEPS = 2;

/** Writes the SOP (and its personas.csv) into `into`; `extra` is set on its population state. */
export function writeBatchSop(into: string, extra: Record<string, unknown> = {}): string {
  const sop = JSON.parse(readFileSync('examples/social-spread/social-spread.sop.json', 'utf8')) as Record<string, unknown> & {
    states: Record<string, Record<string, unknown>>;
  };
  delete sop.$schema;
  const feed = sop.states.feed!;
  feed.population = { source: { file: 'personas.csv' }, persona: 'You are {{name}}.', sample: { n: AGENTS, seed: 5 } };
  feed.activation = { probability: 1 };
  feed.cognition = { tier: 'per_agent' };
  feed.max_steps = STEPS;
  feed.transitions = [];
  feed.next_states = { '1': 'end' };
  Object.assign(feed, extra);
  delete sop.states.debrief;
  sop.agents = {};
  copyFileSync('examples/social-spread/personas.csv', join(into, 'personas.csv'));
  const file = join(into, 'hello.sop.json');
  writeFileSync(file, JSON.stringify(sop, null, 2));
  return file;
}
