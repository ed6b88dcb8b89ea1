// The `social` world: posts, likes, reposts and follows over a follow graph (./graph.ts), feeds
// ranked by follow, recency, hot score or interest (./social-feed.ts), seed posts, and the
// built-in metrics: active users, posts, reposts, likes, follows, and the size, depth and
// breadth of each seed post's repost cascade.
import { buildFollowGraph, type GraphSpec } from './graph.js';
import { feedOf, hotScore } from './social-feed.js';
import { addPost, emptyState, pairKey, restoreSocial, saveSocial, type Post, type SocialParams, type SocialState } from './social-state.js';
import { builtinWorld, type ActionOutcome, type Json, type Metrics, type StepAction } from './world.js';

export type { SocialParams, SocialState } from './social-state.js';

export const socialParamsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    rank: { enum: ['follow', 'recency', 'hot', 'interest'], default: 'follow', description: 'how feeds are ranked' },
    feed_size: { type: 'integer', minimum: 1, maximum: 200, default: 10, description: 'k: posts per feed refresh' },
    hot_gravity: { type: 'number', minimum: 0, default: 1.8, description: 'age decay of the hot score' },
    candidates: { type: 'integer', minimum: 1, default: 1000, description: 'newest posts considered by recency, hot and interest' },
    interest_column: {
      type: 'string',
      default: 'interest',
      description: "the agent attribute whose text is embedded as the agent's interest",
    },
    include_own: { type: 'boolean', default: false, description: "whether an agent's feed shows its own posts" },
    seed_posts: {
      type: 'array',
      default: [],
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['author', 'text'],
        properties: {
          id: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
          author: { type: 'string', minLength: 1 },
          text: { type: 'string', minLength: 1 },
        },
      },
    },
  },
} as const;

const postId = { type: 'string', description: 'the id of a post in your feed, e.g. "p12"' };

export const social = builtinWorld<SocialState, SocialParams>({
  name: 'social',
  description: 'A social network: posts, likes, reposts and follows, with ranked feeds.',
  params: socialParamsSchema,
  actions: [
    {
      name: 'post',
      description: 'Write a new post.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        required: ['text'],
        properties: { text: { type: 'string', minLength: 1, maxLength: 500 } },
      },
    },
    {
      name: 'like',
      description: 'Like a post in your feed.',
      parameters: { type: 'object', additionalProperties: false, required: ['post_id'], properties: { post_id: postId } },
    },
    {
      name: 'repost',
      description: 'Share a post from your feed with your followers.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        required: ['post_id'],
        properties: { post_id: postId, comment: { type: 'string', maxLength: 280 } },
      },
    },
    {
      name: 'follow',
      description: 'Follow the author of a post.',
      parameters: {
        type: 'object',
        additionalProperties: false,
        required: ['agent_id'],
        properties: { agent_id: { type: 'string', description: 'the id of the account to follow' } },
      },
    },
    { name: 'idle', description: 'Do nothing this step.', parameters: { type: 'object', additionalProperties: false, properties: {} } },
  ],

  init(params, agents, _rng, ctx) {
    const { graph } = buildFollowGraph(
      ctx?.graph as GraphSpec | undefined,
      agents.map((a) => a.id),
    );
    const state = emptyState(params, graph, ctx);
    for (const a of agents) {
      const interest = a.attrs[params.interest_column];
      if (interest !== undefined && interest !== null) state.interests[a.id] = String(interest);
    }
    params.seed_posts.forEach((seed, i) => {
      const id = seed.id ?? `s${i}`;
      addPost(state, { id, author: seed.author, text: seed.text, step: 0, likes: 0, reposts: 0, root: id, depth: 0, seed: true });
      state.cascades[id] = { size: 0, levels: [] };
    });
    return state;
  },

  snapshot(state, step) {
    const order = state.posts
      .map((p, i) => ({ i, score: hotScore(p, step, state.params.hot_gravity) }))
      .sort((a, b) => b.score - a.score || b.i - a.i)
      .slice(0, 5);
    return {
      step,
      posts: state.counts.posts,
      reposts: state.counts.reposts,
      likes: state.counts.likes,
      trending: order.map(({ i }) => view(state.posts[i]!)),
    };
  },

  observe(state, agentId, k) {
    const feed = feedOf(state, agentId, k).map((i) => view(state.posts[i]!));
    const has = state.graph.hasNode(agentId);
    return {
      feed,
      following: has ? state.graph.outDegree(agentId) : 0,
      followers: has ? state.graph.inDegree(agentId) : 0,
    };
  },

  apply(state, actions, step) {
    state.clock = step;
    const active = new Set<string>();
    const out = actions.map((a) => {
      const result = applyOne(state, a, step);
      if (result.ok && a.name !== 'idle') active.add(a.agent);
      return result;
    });
    state.active = { step, count: active.size };
    state.clock = step + 1;
    state.globalRank = undefined;
    return out;
  },

  metrics(state, step) {
    const m: Metrics = {
      active_users: state.active.step === step ? state.active.count : 0,
      posts: state.counts.posts,
      reposts: state.counts.reposts,
      likes: state.counts.likes,
      follows: state.graph.size,
    };
    for (const [id, c] of Object.entries(state.cascades)) {
      m[`cascade.${id}.size`] = c.size;
      m[`cascade.${id}.depth`] = c.levels.length;
      m[`cascade.${id}.breadth`] = c.levels.length === 0 ? 0 : Math.max(...c.levels);
    }
    return m;
  },

  objectOf(action) {
    if (action.name === 'like' || action.name === 'repost') return `post:${String(action.args.post_id)}`;
    if (action.name === 'follow') return `agent:${String(action.args.agent_id)}`;
    return undefined;
  },

  save: saveSocial,
  restore: restoreSocial,
});

function view(p: Post): Json {
  const v: Record<string, Json> = { id: p.id, author: p.author, text: p.text, step: p.step, likes: p.likes, reposts: p.reposts };
  if (p.repost_of !== undefined) v.repost_of = p.repost_of;
  return v;
}

function applyOne(state: SocialState, a: StepAction, step: number): ActionOutcome {
  const done = (ok: boolean, output: string): ActionOutcome => ({ agent: a.agent, name: a.name, ok, output });
  switch (a.name) {
    case 'idle':
      return done(true, 'idle');
    case 'post': {
      const text = typeof a.args.text === 'string' ? a.args.text.trim() : '';
      if (text === '') return done(false, 'a post needs text');
      const id = `p${state.posts.length}`;
      addPost(state, { id, author: a.agent, text, step, likes: 0, reposts: 0, root: id, depth: 0 });
      state.counts.posts++;
      return done(true, `posted ${id}`);
    }
    case 'like': {
      const target = postAt(state, a.args.post_id);
      if (!target) return done(false, `no post ${String(a.args.post_id)}`);
      const key = pairKey(a.agent, target.id);
      if (state.liked.has(key)) return done(false, `already liked ${target.id}`);
      state.liked.add(key);
      target.likes++;
      state.counts.likes++;
      return done(true, `liked ${target.id}`);
    }
    case 'repost': {
      const target = postAt(state, a.args.post_id);
      if (!target) return done(false, `no post ${String(a.args.post_id)}`);
      if (target.author === a.agent) return done(false, `${target.id} is your own post`);
      const key = pairKey(a.agent, target.root);
      if (state.reposted.has(key)) return done(false, `already reposted ${target.root}`);
      state.reposted.add(key);
      const id = `p${state.posts.length}`;
      const comment = typeof a.args.comment === 'string' ? a.args.comment.trim() : '';
      const text = comment === '' ? target.text : `${comment} // ${target.text}`;
      addPost(state, {
        id,
        author: a.agent,
        text,
        step,
        likes: 0,
        reposts: 0,
        repost_of: target.id,
        root: target.root,
        depth: target.depth + 1,
      });
      target.reposts++;
      state.counts.reposts++;
      const cascade = state.cascades[target.root];
      if (cascade) {
        cascade.size++;
        while (cascade.levels.length < target.depth + 1) cascade.levels.push(0);
        cascade.levels[target.depth]!++;
      }
      return done(true, `reposted ${target.id} as ${id}`);
    }
    case 'follow': {
      const other = String(a.args.agent_id ?? '');
      if (other === a.agent) return done(false, 'cannot follow yourself');
      if (!state.graph.hasNode(other)) return done(false, `no account ${other}`);
      if (!state.graph.hasNode(a.agent)) state.graph.addNode(a.agent);
      if (state.graph.hasEdge(a.agent, other)) return done(false, `already following ${other}`);
      state.graph.addEdge(a.agent, other);
      state.counts.follows++;
      return done(true, `followed ${other}`);
    }
    default:
      return done(false, `"${a.name}" is not an action of world "social"`);
  }
}

function postAt(state: SocialState, id: unknown): Post | undefined {
  const i = typeof id === 'string' ? state.index.get(id) : undefined;
  return i === undefined ? undefined : state.posts[i];
}
