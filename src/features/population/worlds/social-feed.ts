// Feeds of the social world: k posts per refresh, ranked by
//   follow   - posts and reposts of the accounts the agent follows, newest first
//   recency  - every post, newest first
//   hot      - (likes + 2 reposts + 1) / (age + 2)^gravity, age in steps (Hacker News style)
//   interest - cosine similarity of the post's embedding to the agent's interest text
// Ties go to the newer post, so a feed never depends on anything but the state.
import type { Post, SocialState } from './social-state.js';

/** Newer first: by step, then by position (posts are appended in apply order). */
const newer = (a: number, b: number) => b - a;

export function hotScore(post: Post, now: number, gravity: number): number {
  return (post.likes + 2 * post.reposts + 1) / Math.pow(Math.max(0, now - post.step) + 2, gravity);
}

function vectorOf(state: SocialState, key: string, text: string): Float32Array | undefined {
  if (!state.embed) return undefined;
  let v = state.vectors.get(key);
  if (!v) {
    v = state.embed(text);
    state.vectors.set(key, v);
  }
  return v;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

/** Post indices of the newest `limit` posts, newest first. */
function newest(state: SocialState, limit: number): number[] {
  const out: number[] = [];
  for (let i = state.posts.length - 1; i >= 0 && out.length < limit; i--) out.push(i);
  return out;
}

/** The global order of recency or hot, computed once per state version. */
function globalOrder(state: SocialState, rank: 'recency' | 'hot'): number[] {
  const key = `${rank}:${state.clock}:${state.posts.length}:${state.counts.likes}:${state.counts.reposts}`;
  if (state.globalRank?.key === key) return state.globalRank.order;
  const window = newest(state, state.params.candidates);
  if (rank === 'hot') {
    const score = new Map(window.map((i) => [i, hotScore(state.posts[i]!, state.clock, state.params.hot_gravity)]));
    window.sort((a, b) => score.get(b)! - score.get(a)! || newer(a, b));
  }
  state.globalRank = { key, order: window };
  return window;
}

function followFeed(state: SocialState, agentId: string, k: number): number[] {
  const picked: number[] = [];
  const followees = state.graph.hasNode(agentId) ? state.graph.outNeighbors(agentId) : [];
  const authors = state.params.include_own ? [...followees, agentId] : followees;
  for (const author of authors) {
    const list = state.byAuthor.get(author);
    if (!list) continue;
    for (let j = list.length - 1; j >= 0 && j >= list.length - k; j--) picked.push(list[j]!);
  }
  return picked.sort(newer).slice(0, k);
}

function interestFeed(state: SocialState, agentId: string, k: number): number[] {
  const text = state.interests[agentId];
  const mine = text === undefined ? undefined : vectorOf(state, `agent:${agentId}`, text);
  const window = newest(state, state.params.candidates).filter((i) => state.params.include_own || state.posts[i]!.author !== agentId);
  if (!mine) return window.slice(0, k);
  const score = new Map(window.map((i) => [i, cosine(mine, vectorOf(state, `post:${state.posts[i]!.id}`, state.posts[i]!.text)!)]));
  return window.sort((a, b) => score.get(b)! - score.get(a)! || newer(a, b)).slice(0, k);
}

/** The indices of the `k` posts of one agent's feed, best first. */
export function feedOf(state: SocialState, agentId: string, k: number): number[] {
  switch (state.params.rank) {
    case 'follow':
      return followFeed(state, agentId, k);
    case 'interest':
      return interestFeed(state, agentId, k);
    default: {
      const out: number[] = [];
      for (const i of globalOrder(state, state.params.rank)) {
        if (out.length >= k) break;
        if (state.params.include_own || state.posts[i]!.author !== agentId) out.push(i);
      }
      return out;
    }
  }
}
