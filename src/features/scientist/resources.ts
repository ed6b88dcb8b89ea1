// Resource levels (seed 003): a task's value decides the LLM profile it works with, how far it
// may be escalated when its solution is not convincing, whether it may ask the user (never when
// the user is away) and whether it may create a framework.
import { EngineError } from '../../shared/errors.js';
import type { Sop } from '../../format/sop/types.js';
import type { TaskValue } from './taskboard/task.js';
import { isOneOf } from '../../shared/util/one-of.js';

export const LEVELS = ['low', 'medium', 'high'] as const;
export type Level = (typeof LEVELS)[number];

export type ResourcesConfig = NonNullable<Sop['resources']>;
export type LlmProfile = NonNullable<NonNullable<ResourcesConfig['levels']>['low']>;
export type ValuePolicy = NonNullable<NonNullable<ResourcesConfig['values']>['high']>;

/** Defaults follow the seed: high tasks may use everything; medium may use the best models but
 * neither ask the user nor create frameworks; low tasks use only the low level. */
export const DEFAULT_LEVELS: Readonly<Record<Level, Required<Pick<LlmProfile, 'max_steps'>> & LlmProfile>> = {
  low: { temperature: 0.2, max_steps: 2 },
  medium: { temperature: 0.3, max_steps: 4 },
  high: { temperature: 0.3, max_steps: 8 },
};

export const DEFAULT_VALUES: Readonly<Record<TaskValue, Required<ValuePolicy>>> = {
  high: { start_level: 'medium', max_level: 'high', ask_user: true, create_framework: true },
  medium: { start_level: 'medium', max_level: 'high', ask_user: false, create_framework: false },
  low: { start_level: 'low', max_level: 'low', ask_user: false, create_framework: false },
};

export interface TaskResources {
  value: TaskValue;
  level: Level;
  /** The LLM settings of the level (model undefined: the SOP's model). */
  profile: LlmProfile & { max_steps: number };
  may_ask_user: boolean;
  /** Why asking the user is not allowed, for the prompt. */
  ask_user_denied?: string;
  may_create_framework: boolean;
  /** Why not, when the task's value allows frameworks but its level is not the highest. */
  framework_denied?: string;
  /** The level a retry would use, when the value allows one. */
  next_level?: Level;
}

export class ResourceError extends EngineError {
  constructor(message: string) {
    super(message, 'RESOURCE');
    this.name = 'ResourceError';
  }
}

const rank = (l: Level) => LEVELS.indexOf(l);

export function policyFor(value: TaskValue, config: ResourcesConfig = {}): Required<ValuePolicy> {
  const p = { ...DEFAULT_VALUES[value], ...config.values?.[value] };
  if (rank(p.start_level) > rank(p.max_level)) {
    throw new ResourceError(`resources.values.${value}: start_level ${p.start_level} is above max_level ${p.max_level}`);
  }
  return p;
}

/** The level a new task of this value starts at. */
export function startLevel(value: TaskValue, config: ResourcesConfig = {}): Level {
  return policyFor(value, config).start_level;
}

export { userAway } from '../../core/io/human.js';

/** What a task of `value` working at `level` (default: its start level) may use. */
export function resourcesFor(
  value: TaskValue,
  level: string | undefined,
  config: ResourcesConfig = {},
  opts: { userAway?: boolean } = {},
): TaskResources {
  const policy = policyFor(value, config);
  const lvl = level ?? policy.start_level;
  if (!isOneOf(LEVELS, lvl)) throw new ResourceError(`unknown resource level "${lvl}"; levels are ${LEVELS.join(', ')}`);
  if (rank(lvl) > rank(policy.max_level)) {
    throw new ResourceError(`a ${value}-value task may work at most at level ${policy.max_level}, not ${lvl}`);
  }
  const profile = { ...DEFAULT_LEVELS[lvl], ...config.levels?.[lvl] };
  const next = LEVELS[rank(lvl) + 1];
  const askDenied = opts.userAway
    ? 'the user is away (user_away): work it out without them'
    : policy.ask_user
      ? undefined
      : `a ${value}-value task may not ask the user`;
  return {
    value,
    level: lvl,
    profile,
    may_ask_user: askDenied === undefined,
    ...(askDenied ? { ask_user_denied: askDenied } : {}),
    // as the seed says: a framework is made at the highest level the task may reach, once the lower ones did not do
    may_create_framework: policy.create_framework && lvl === policy.max_level,
    ...(policy.create_framework && lvl !== policy.max_level
      ? { framework_denied: `a framework is made only at the task's highest level (${policy.max_level}): escalate first` }
      : {}),
    ...(next && rank(next) <= rank(policy.max_level) ? { next_level: next } : {}),
  };
}

/** The next level up for a retry, or a ResourceError saying why there is none. */
export function escalate(value: TaskValue, level: string | undefined, config: ResourcesConfig = {}): Level {
  const r = resourcesFor(value, level, config);
  if (!r.next_level) {
    throw new ResourceError(
      `a ${value}-value task is already at its highest level (${r.level}); ${r.may_create_framework ? 'create a framework instead' : 'close it with the best answer or fail it'}`,
    );
  }
  return r.next_level;
}
