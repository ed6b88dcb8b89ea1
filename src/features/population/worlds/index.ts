// Worlds of population states (docs/population.md#worlds): the World interface and defineWorld,
// the built-in social, market and board worlds, the ordering of simultaneous moves, the rule tier
// (ZI-C traders), and the validation of a state's `world` for `sop validate`.
export * from './world.js';
export { social } from './social.js';
export type { SocialParams, SocialState } from './social.js';
export { market, type MarketParams, type MarketState, type Trader, type Trade } from './market.js';
export { board, type BoardParams, type BoardState, type Reducer } from './board.js';
export { network, type NetworkParams, type NetworkState } from './network.js';
export { contest, type ContestParams, type ContestState } from './contest.js';
export { groups, type GroupsParams, type GroupsState } from './groups.js';
export { grid, gridNeighbours, type GridParams, type GridState } from './grid.js';
export { WorldRegistry, defaultWorlds, registerWorld, BUILT_IN_WORLDS } from './registry.js';
export * from './order.js';
export { compileExpression, ExpressionError, type CompiledExpression, type Scope } from './expr.js';
export { buildFollowGraph, parseEdgeList, GraphError, type GraphSpec, type GraphModel, type Edge } from './graph.js';
export { readEdgeListFile } from './graph-file.js';
export { runRuleStep, ruleRng, type RulePolicy, type RuleContext, type RuleStep } from './rule.js';
export { ziC, type ZicOptions } from './zic.js';
export { validateWorldSpec, validateResolution, type WorldCheckOptions } from './validate.js';
export { worldsSchemaDocument } from './schema.js';
export { mixSeed, seededRng } from './seed.js';
export { gini, maxSurplus, clearingOf } from './market-book.js';
export { cosine, hotScore } from './social-feed.js';
