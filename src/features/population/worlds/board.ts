// The `board` world: shared keys, each with a declared reducer that folds the step's writes in
//   sum, max, min (numbers), count (how many writes), last (the last value written), append (a list).
// Its metrics are the keys (a list's length; a non-numeric last value is null).
import { builtinWorld, type ActionSpec, type Json, type Metrics } from './world.js';

export type Reducer = 'sum' | 'max' | 'min' | 'count' | 'last' | 'append';

export interface BoardParams {
  keys: Record<string, { reducer: Reducer; initial?: Json }>;
  /** An appended list keeps its last `append_limit` items. */
  append_limit: number;
}

export interface BoardState {
  params: BoardParams;
  values: Record<string, Json>;
  writes: number;
}

export const boardParamsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['keys'],
  properties: {
    keys: {
      type: 'object',
      minProperties: 1,
      propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_.-]{0,63}$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['reducer'],
        properties: { reducer: { enum: ['sum', 'max', 'min', 'count', 'last', 'append'] }, initial: {} },
      },
    },
    append_limit: { type: 'integer', minimum: 1, default: 100 },
  },
} as const;

const NUMERIC = new Set<Reducer>(['sum', 'max', 'min']);

const writeAction: ActionSpec = {
  name: 'write',
  description: 'Write a value to a key of the shared board.',
  parameters: {
    type: 'object',
    additionalProperties: false,
    required: ['key'],
    properties: { key: { type: 'string' }, value: { description: 'the value (a number for sum, max and min keys)' } },
  },
};

const idleAction: ActionSpec = {
  name: 'idle',
  description: 'Do nothing this step.',
  parameters: { type: 'object', additionalProperties: false, properties: {} },
};

function initialOf(spec: { reducer: Reducer; initial?: Json }): Json {
  if (spec.initial !== undefined) return structuredClone(spec.initial);
  switch (spec.reducer) {
    case 'append':
      return [];
    case 'last':
      return null;
    case 'sum':
    case 'count':
      return 0;
    default:
      return null;
  }
}

export const board = builtinWorld<BoardState, BoardParams>({
  name: 'board',
  description: 'A shared board of keys, each folding the writes with its declared reducer.',
  params: boardParamsSchema,
  actions: [writeAction, idleAction],

  actionsFor(params) {
    const keys = Object.keys(params.keys).sort();
    const write: ActionSpec = {
      ...writeAction,
      parameters: {
        ...writeAction.parameters,
        properties: { key: { enum: keys }, value: (writeAction.parameters.properties as Record<string, unknown>).value },
      },
    };
    return [write, idleAction];
  },

  init(params) {
    const values: Record<string, Json> = {};
    for (const [key, spec] of Object.entries(params.keys)) values[key] = initialOf(spec);
    return { params, values, writes: 0 };
  },

  snapshot(state, step) {
    return { step, values: structuredClone(state.values) };
  },

  observe(state, _agentId, k) {
    const out: Record<string, Json> = {};
    for (const [key, value] of Object.entries(state.values)) out[key] = Array.isArray(value) ? value.slice(-k) : value;
    return out;
  },

  apply(state, actions) {
    return actions.map((a) => {
      const done = (ok: boolean, output: string) => ({ agent: a.agent, name: a.name, ok, output });
      if (a.name === 'idle') return done(true, 'idle');
      if (a.name !== 'write') return done(false, `"${a.name}" is not an action of world "board"`);
      const key = String(a.args.key);
      const spec = Object.hasOwn(state.params.keys, key) ? state.params.keys[key]! : undefined;
      if (!spec) return done(false, `no key "${key}" (keys: ${Object.keys(state.params.keys).sort().join(', ')})`);
      const value = (a.args.value ?? null) as Json;
      const current = state.values[key] ?? null;
      if (NUMERIC.has(spec.reducer) && (typeof value !== 'number' || !Number.isFinite(value))) return done(false, `${key} takes a number`);
      switch (spec.reducer) {
        case 'sum':
          state.values[key] = Number(current ?? 0) + (value as number);
          break;
        case 'max':
          state.values[key] = current === null ? value : Math.max(Number(current), value as number);
          break;
        case 'min':
          state.values[key] = current === null ? value : Math.min(Number(current), value as number);
          break;
        case 'count':
          state.values[key] = Number(current ?? 0) + 1;
          break;
        case 'last':
          state.values[key] = value;
          break;
        case 'append': {
          const list = Array.isArray(current) ? current : [];
          list.push(value);
          if (list.length > state.params.append_limit) list.splice(0, list.length - state.params.append_limit);
          state.values[key] = list;
          break;
        }
      }
      state.writes++;
      return done(true, `${key} = ${JSON.stringify(state.values[key]).slice(0, 60)}`);
    });
  },

  metrics(state) {
    const m: Metrics = {};
    for (const [key, value] of Object.entries(state.values)) {
      if (Array.isArray(value)) m[`${key}.length`] = value.length;
      else m[key] = typeof value === 'number' ? value : null;
    }
    return m;
  },

  objectOf(action) {
    return action.name === 'write' ? `key:${String(action.args.key)}` : undefined;
  },
});
