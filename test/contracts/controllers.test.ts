// Every controller strategy (src/core/runtime/controllers/index.ts) runs the controller contract.
import { describe, expect, it } from 'vitest';
import { controllerTypes } from '../../src/core/runtime/controllers/index.js';
import { controllerContract } from './controller.js';

/** How each strategy records its picks in speaker_chosen; a new strategy adds its line here. */
const HOWS: Record<string, readonly string[]> = {
  order: ['order'],
  random: ['random'],
  rule: ['rule', 'rule_fallback'],
};

describe('every controller strategy has a contract entry', () => {
  it('lists the same strategies as the registry', () => {
    expect(Object.keys(HOWS).sort()).toEqual(controllerTypes().sort());
  });
});

for (const type of controllerTypes()) controllerContract(type, HOWS[type] ?? []);
