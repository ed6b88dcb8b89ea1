// The registry of controller strategies, by the controller "type" a SOP state names.
import { order } from './order.js';
import { random } from './random.js';
import { rule } from './rule.js';
import type { ControllerStrategy } from './types.js';
import { EngineError } from '../../../shared/errors.js';

const STRATEGIES = new Map<string, ControllerStrategy>([order, random, rule].map((s) => [s.type, s]));

/** The strategy of a controller type (the schema allows only registered types). */
export function controllerStrategy(type: string): ControllerStrategy {
  const s = STRATEGIES.get(type);
  if (!s) throw new EngineError(`unknown controller type "${type}" (known: ${[...STRATEGIES.keys()].join(', ')})`, 'INTERNAL');
  return s;
}

export function controllerTypes(): string[] {
  return [...STRATEGIES.keys()];
}

export type { ControllerContext, ControllerStrategy, SpeakerPick } from './types.js';
