// The social world's state: posts (originals and reposts), likes, the follow graph (graphology)
// and the repost cascades of the seed posts, with the indices the feeds need. Saved as JSON for
// checkpoints (the graph as follower/followee pairs); the indices are rebuilt on restore.
import type { DirectedGraph } from 'graphology';
import { lazyRequire } from '../../../shared/util/lazy-require.js';
import type { Json, WorldInitContext } from './world.js';

const graphology = lazyRequire<typeof import('graphology')>('graphology');

export type Rank = 'follow' | 'recency' | 'hot' | 'interest';

export interface SocialParams {
  rank: Rank;
  feed_size: number;
  hot_gravity: number;
  candidates: number;
  interest_column: string;
  include_own: boolean;
  seed_posts: Array<{ id?: string; author: string; text: string }>;
}

export interface Post {
  id: string;
  author: string;
  text: string;
  step: number;
  likes: number;
  reposts: number;
  /** The post this one reposts. */
  repost_of?: string;
  /** The original post at the root of its repost chain (its own id for an original). */
  root: string;
  /** Hops from the root (0 for an original). */
  depth: number;
  seed?: boolean;
}

export interface Cascade {
  size: number;
  /** Reposts at each depth: index 0 is depth 1. */
  levels: number[];
}

export interface SocialState {
  params: SocialParams;
  graph: DirectedGraph;
  posts: Post[];
  /** The step the next apply is (0 before the first). */
  clock: number;
  counts: { posts: number; reposts: number; likes: number; follows: number };
  /** Agents that did something other than idle in the last applied step. */
  active: { step: number; count: number };
  cascades: Record<string, Cascade>;
  liked: Set<string>;
  reposted: Set<string>;
  interests: Record<string, string>;
  // Derived (not saved):
  index: Map<string, number>;
  byAuthor: Map<string, number[]>;
  embed?: (text: string) => Float32Array;
  vectors: Map<string, Float32Array>;
  globalRank?: { key: string; order: number[] };
}

export const pairKey = (agent: string, post: string) => `${agent}\u0000${post}`;

export function addPost(state: SocialState, post: Post): void {
  state.index.set(post.id, state.posts.length);
  const list = state.byAuthor.get(post.author);
  if (list) list.push(state.posts.length);
  else state.byAuthor.set(post.author, [state.posts.length]);
  state.posts.push(post);
  state.globalRank = undefined;
}

export function emptyState(params: SocialParams, graph: DirectedGraph, ctx: WorldInitContext | undefined): SocialState {
  return {
    params,
    graph,
    posts: [],
    clock: 0,
    counts: { posts: 0, reposts: 0, likes: 0, follows: graph.size },
    active: { step: -1, count: 0 },
    cascades: {},
    liked: new Set(),
    reposted: new Set(),
    interests: {},
    index: new Map(),
    byAuthor: new Map(),
    embed: ctx?.embed,
    vectors: new Map(),
  };
}

export function saveSocial(state: SocialState): Json {
  return {
    params: state.params as unknown as Json,
    nodes: state.graph.nodes(),
    follows: state.graph.mapEdges((_e: string, _a: unknown, s: string, t: string) => [s, t]),
    posts: state.posts as unknown as Json,
    clock: state.clock,
    counts: state.counts,
    active: state.active,
    cascades: state.cascades as unknown as Json,
    liked: [...state.liked],
    reposted: [...state.reposted],
    interests: state.interests,
  };
}

export function restoreSocial(saved: Json, ctx?: WorldInitContext): SocialState {
  const s = saved as Record<string, unknown>;
  const graph = new (graphology().DirectedGraph)();
  for (const n of s.nodes as string[]) graph.addNode(n);
  for (const [a, b] of s.follows as Array<[string, string]>) graph.mergeEdge(a, b);
  const state = emptyState(structuredClone(s.params) as SocialParams, graph, ctx);
  for (const p of s.posts as Post[]) addPost(state, { ...p });
  state.clock = s.clock as number;
  state.counts = { ...(s.counts as SocialState['counts']) };
  state.active = { ...(s.active as SocialState['active']) };
  state.cascades = structuredClone(s.cascades) as Record<string, Cascade>;
  state.liked = new Set(s.liked as string[]);
  state.reposted = new Set(s.reposted as string[]);
  state.interests = { ...(s.interests as Record<string, string>) };
  return state;
}
