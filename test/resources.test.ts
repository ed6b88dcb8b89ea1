// Resource levels: a task's value selects its LLM profile and what it may do.
import { describe, expect, it } from 'vitest';
import { escalate, resourcesFor, startLevel, userAway, type ResourcesConfig } from '../src/scientist/resources.js';

const config: ResourcesConfig = {
  levels: {
    low: { model: 'small-model', temperature: 0.1, max_steps: 2 },
    medium: { model: 'mid-model', max_steps: 4 },
    high: { model: 'big-model', temperature: 0.7, max_steps: 10 },
  },
};

describe('resource levels', () => {
  it('select the LLM profile of the level a task works at', () => {
    expect(resourcesFor('low', undefined, config).profile).toEqual({ model: 'small-model', temperature: 0.1, max_steps: 2 });
    expect(resourcesFor('medium', undefined, config).profile).toEqual({ model: 'mid-model', temperature: 0.3, max_steps: 4 });
    expect(resourcesFor('high', 'high', config).profile).toEqual({ model: 'big-model', temperature: 0.7, max_steps: 10 });
  });

  it('escalate a retry up to the highest level the value allows', () => {
    expect(startLevel('medium', config)).toBe('medium');
    expect(escalate('medium', 'medium', config)).toBe('high');
    expect(() => escalate('medium', 'high', config)).toThrow(/already at its highest level \(high\); close it with the best answer or fail it/);
    expect(() => escalate('high', 'high', config)).toThrow(/create a framework instead/);
    expect(() => escalate('low', undefined, config)).toThrow(/already at its highest level \(low\)/);
    expect(() => resourcesFor('low', 'high', config)).toThrow('a low-value task may work at most at level low, not high');
    expect(() => resourcesFor('low', 'huge', config)).toThrow(/unknown resource level "huge"/);
    const custom: ResourcesConfig = { values: { low: { max_level: 'medium' } } };
    expect(escalate('low', 'low', custom)).toBe('medium');
    expect(() => resourcesFor('low', undefined, { values: { low: { start_level: 'high' } } })).toThrow(/start_level high is above max_level low/);
  });

  it('let only high-value tasks ask the user or create frameworks, and nobody ask when the user is away', () => {
    const high = resourcesFor('high', undefined, config);
    expect([high.may_ask_user, high.may_create_framework]).toEqual([true, true]);
    const medium = resourcesFor('medium', undefined, config);
    expect([medium.may_ask_user, medium.may_create_framework]).toEqual([false, false]);
    expect(medium.ask_user_denied).toBe('a medium-value task may not ask the user');
    const away = resourcesFor('high', undefined, config, { userAway: true });
    expect(away.may_ask_user).toBe(false);
    expect(away.ask_user_denied).toMatch(/user is away/);
    expect(away.may_create_framework).toBe(true);
    const sopSaysAsk: ResourcesConfig = { values: { low: { ask_user: true } } };
    expect(resourcesFor('low', undefined, sopSaysAsk).may_ask_user).toBe(true);
    expect(resourcesFor('low', undefined, sopSaysAsk, { userAway: userAway(sopSaysAsk, { user_away: 'true' }) }).may_ask_user).toBe(false);
  });

  it('read user_away from the SOP or the run inputs', () => {
    expect(userAway({}, {})).toBe(false);
    expect(userAway({ user_away: true }, {})).toBe(true);
    expect(userAway({}, { user_away: 'yes' })).toBe(true);
    expect(userAway({}, { user_away: 'false' })).toBe(false);
  });
});
