// The JSON Schema (draft-07) of a population state's `world` and `resolution`, whose document is
// schemas/worlds.schema.json (test/worlds-schema.test.ts checks the file matches this). The
// params schemas are the built-in worlds' own, so the file and the code cannot drift apart.
import { boardParamsSchema } from './board.js';
import { contestParamsSchema } from './contest.js';
import { gridParamsSchema } from './grid.js';
import { groupsParamsSchema } from './groups.js';
import { networkParamsSchema } from './network.js';
import { marketParamsSchema } from './market.js';
import { socialParamsSchema } from './social.js';

const seed = { type: 'integer', description: 'seed of the shuffle (default: the run seed)' };

export const graphModelSchema = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['model', 'seed'],
      properties: {
        model: { const: 'erdos_renyi' },
        p: { type: 'number', minimum: 0, maximum: 1 },
        mean_degree: { type: 'number', minimum: 0 },
        seed: { type: 'integer' },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['model', 'm', 'seed'],
      properties: { model: { const: 'barabasi_albert' }, m: { type: 'integer', minimum: 1 }, seed: { type: 'integer' } },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['model', 'k', 'beta', 'seed'],
      properties: {
        model: { const: 'watts_strogatz' },
        k: { type: 'integer', minimum: 2 },
        beta: { type: 'number', minimum: 0, maximum: 1 },
        seed: { type: 'integer' },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['model', 'clusters', 'mean_degree', 'seed'],
      properties: {
        model: { const: 'clusters' },
        clusters: { type: 'integer', minimum: 1 },
        mean_degree: { type: 'number', minimum: 0 },
        density: { type: 'number', minimum: 0, maximum: 1 },
        seed: { type: 'integer' },
      },
    },
  ],
} as const;

export const graphSchema = {
  description:
    'The graph of a social world (who follows whom) or a network world (undirected): an edge list (file or inline pairs, follower then followee) or a seeded generator.',
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['file'],
      properties: {
        file: {
          type: 'string',
          minLength: 1,
          description: 'CSV (follower,followee lines) or JSON list of pairs, relative to the SOP file',
        },
        reciprocal: { type: 'boolean' },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['edges'],
      properties: {
        edges: { type: 'array', items: { type: 'array', items: { type: 'string' }, minItems: 2, maxItems: 2 } },
        reciprocal: { type: 'boolean' },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['generate'],
      properties: { generate: graphModelSchema, reciprocal: { type: 'boolean' } },
    },
  ],
} as const;

const paramsOf = (type: string, ref: string) => ({
  if: { properties: { type: { const: type } }, required: ['type'] },
  then: { properties: { params: { $ref: `#/definitions/${ref}` } } },
});

export const worldSpecSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    type: {
      type: 'string',
      pattern: '^[a-z][a-z0-9_-]{0,63}$',
      description: 'social, market, board, network, grid, contest, groups, or the name of a world a program added with defineWorld',
    },
    params: { type: 'object', description: "the world's parameters (its own JSON Schema)" },
    graph: { $ref: '#/definitions/graph' },
  },
  allOf: [
    paramsOf('social', 'social_params'),
    paramsOf('market', 'market_params'),
    paramsOf('board', 'board_params'),
    paramsOf('network', 'network_params'),
    paramsOf('grid', 'grid_params'),
    paramsOf('contest', 'contest_params'),
    paramsOf('groups', 'groups_params'),
  ],
} as const;

export const resolutionSchema = {
  description: "How a step's simultaneous actions are ordered before the world applies them (never completion order).",
  oneOf: [
    { type: 'object', additionalProperties: false, required: ['type'], properties: { type: { const: 'shuffle' }, seed } },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'expr'],
      properties: {
        type: { const: 'priority' },
        expr: { type: 'string', minLength: 1, description: "higher first, e.g. followers + (action.name == 'post' ? 10 : 0)" },
        seed,
      },
    },
    { type: 'object', additionalProperties: false, required: ['type'], properties: { type: { const: 'judge' }, seed } },
  ],
} as const;

/** The whole document of schemas/worlds.schema.json. */
export function worldsSchemaDocument(): Record<string, unknown> {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    $id: 'https://sop.dev/schemas/worlds.schema.json',
    title: 'sop population worlds',
    description:
      "Definitions of a population state's world (social, market, board or a user world) and of its resolution policy. Generated from src/features/population/worlds/schema.ts.",
    definitions: {
      world: worldSpecSchema,
      graph: graphSchema,
      graph_model: graphModelSchema,
      resolution: resolutionSchema,
      social_params: socialParamsSchema,
      market_params: marketParamsSchema,
      board_params: boardParamsSchema,
      network_params: networkParamsSchema,
      grid_params: gridParamsSchema,
      contest_params: contestParamsSchema,
      groups_params: groupsParamsSchema,
    },
  };
}
