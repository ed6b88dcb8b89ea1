// A small population SOP for tests: the social-spread example with `agents` sampled agents, each
// deciding by its own LLM call every step, for `steps` steps, then the end (no debrief).
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The batch mode tests' size. */
export const AGENTS = 12;
export const STEPS = 2;

/**
 * Writes the SOP (and its personas.csv) into `into` as hello.sop.json; `extra` is set on its
 * population state.
 */
export function writePopulationSop(into: string, o: { agents?: number; steps?: number; extra?: Record<string, unknown> } = {}): string {
  const sop = JSON.parse(readFileSync('examples/social-spread/social-spread.sop.json', 'utf8')) as Record<string, unknown> & {
    states: Record<string, Record<string, unknown>>;
  };
  delete sop.$schema;
  const feed = sop.states.feed!;
  feed.population = { source: { file: 'personas.csv' }, persona: 'You are {{name}}.', sample: { n: o.agents ?? AGENTS, seed: 5 } };
  feed.activation = { probability: 1 };
  feed.cognition = { tier: 'per_agent' };
  feed.max_steps = o.steps ?? STEPS;
  feed.transitions = [];
  feed.next_states = { '1': 'end' };
  Object.assign(feed, o.extra ?? {});
  delete sop.states.debrief;
  sop.agents = {};
  copyFileSync('examples/social-spread/personas.csv', join(into, 'personas.csv'));
  const file = join(into, 'hello.sop.json');
  writeFileSync(file, JSON.stringify(sop, null, 2));
  return file;
}

/** The first match of `re` in any of a request's messages (a population prompt's persona is not its first message). */
export function inMessages(messages: ReadonlyArray<{ content?: string | null }>, re: RegExp): string | undefined {
  for (const m of messages) {
    const found = re.exec(m.content ?? '')?.[1];
    if (found !== undefined) return found;
  }
  return undefined;
}
