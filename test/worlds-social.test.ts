// The social world: follow graphs from edge lists and seeded generators (graphology), feeds
// ranked by follow, recency, hot score and interest, repost cascades of seed posts, and a state
// that survives a save and restore.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildFollowGraph, parseEdgeList } from '../src/features/population/worlds/graph.js';
import { readEdgeListFile } from '../src/features/population/worlds/graph-file.js';
import { seededRng } from '../src/features/population/worlds/seed.js';
import { social, type SocialState } from '../src/features/population/worlds/social.js';
import {
  resolveParams,
  restoreState,
  saveState,
  type StepAction,
  type WorldAgent,
  type WorldInitContext,
} from '../src/features/population/worlds/world.js';

const tmp = mkdtempSync(join(tmpdir(), 'sop-worlds-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const ids = Array.from({ length: 300 }, (_, i) => `u${i}`);
const agentsOf = (list: string[], attrs: (id: string) => Record<string, unknown> = () => ({})): WorldAgent[] =>
  list.map((id) => ({ id, attrs: attrs(id) }));

function start(agents: WorldAgent[], params: Record<string, unknown>, ctx: WorldInitContext = {}): SocialState {
  const p = resolveParams(social, params);
  if (!p.ok) throw new Error(JSON.stringify(p.problems));
  return social.init(p.params, agents, seededRng(1), ctx);
}
const act = (agent: string, name: string, args: Record<string, unknown> = {}): StepAction => ({ agent, name, args });
const feedIds = (s: SocialState, agent: string, k = 10) =>
  (social.observe(s, agent, k) as { feed: Array<{ id: string }> }).feed.map((p) => p.id);

describe('follow graph', () => {
  it('generators are seeded: the same seed gives the same edges, another seed others', () => {
    const edges = (spec: Parameters<typeof buildFollowGraph>[0]) =>
      buildFollowGraph(spec, ids).graph.mapEdges((_e, _a, s, t) => `${s}>${t}`);
    for (const generate of [
      { model: 'erdos_renyi' as const, mean_degree: 5, seed: 1 },
      { model: 'barabasi_albert' as const, m: 3, seed: 1 },
      { model: 'watts_strogatz' as const, k: 4, beta: 0.2, seed: 1 },
      { model: 'clusters' as const, clusters: 4, mean_degree: 6, seed: 1 },
    ]) {
      const a = edges({ generate });
      expect(a.length).toBeGreaterThan(ids.length);
      expect(edges({ generate })).toEqual(a);
      expect(edges({ generate: { ...generate, seed: 2 } })).not.toEqual(a);
    }
  });

  it('Barabasi-Albert makes hubs; Watts-Strogatz keeps every node at k follows', () => {
    const ba = buildFollowGraph({ generate: { model: 'barabasi_albert', m: 2, seed: 4 } }, ids).graph;
    const inDegrees = ids.map((id) => ba.inDegree(id)).sort((a, b) => b - a);
    expect(inDegrees[0]!).toBeGreaterThan(8 * (ba.size / ids.length)); // a hub far above the mean
    const ws = buildFollowGraph({ generate: { model: 'watts_strogatz', k: 6, beta: 0.3, seed: 4 } }, ids).graph;
    expect(new Set(ids.map((id) => ws.outDegree(id)))).toEqual(new Set([6]));
  });

  it('edge lists come from CSV (header skipped) or JSON, file or inline; edges to absent agents are dropped', async () => {
    const csv = join(tmp, 'follows.csv');
    writeFileSync(csv, 'follower,followee\nu1,u2\n"u2",u3\n\nu3,ghost\n');
    const pairs = await readEdgeListFile(csv);
    expect(pairs).toEqual([
      ['u1', 'u2'],
      ['u2', 'u3'],
      ['u3', 'ghost'],
    ]);
    expect(parseEdgeList('[["u1","u2"],{"follower":"u2","followee":"u1"}]', 'json')).toEqual([
      ['u1', 'u2'],
      ['u2', 'u1'],
    ]);
    const { graph, dropped } = buildFollowGraph({ edges: pairs, reciprocal: true }, ['u1', 'u2', 'u3']);
    expect(dropped).toBe(1);
    expect(graph.hasEdge('u2', 'u1') && graph.hasEdge('u3', 'u2')).toBe(true);
    await expect(readEdgeListFile(join(tmp, 'missing.csv'))).rejects.toThrow(/edge list .*missing\.csv: file not found/);
    // a file that is not JSON is described by line and column, never by its bytes
    expect(() => parseEdgeList('[["u1","u2"],\n root:x:0:0:CANARY]', 'json')).toThrow(
      /^the edge list is not JSON \(line 2, column 2: Unexpected character\)$/,
    );
  });
});

describe('feeds', () => {
  const people = ['ann', 'bob', 'cy', 'dee'];
  const edges: Array<[string, string]> = [
    ['ann', 'bob'],
    ['ann', 'cy'],
  ];

  it('follow: only followees’ posts and reposts, newest first, k at most', () => {
    const s = start(agentsOf(people), { rank: 'follow' }, { graph: { edges } });
    social.apply(s, [act('bob', 'post', { text: 'b0' }), act('cy', 'post', { text: 'c0' }), act('dee', 'post', { text: 'd0' })], 0);
    social.apply(s, [act('bob', 'post', { text: 'b1' }), act('cy', 'repost', { post_id: 'p2' })], 1);
    expect(feedIds(s, 'ann')).toEqual(['p4', 'p3', 'p1', 'p0']);
    expect(feedIds(s, 'ann', 2)).toEqual(['p4', 'p3']);
    expect(feedIds(s, 'dee')).toEqual([]);
  });

  it('recency and hot: the hot score lifts a liked post above newer ones', () => {
    const s = start(agentsOf(people), { rank: 'hot', hot_gravity: 1 });
    social.apply(s, [act('bob', 'post', { text: 'old but liked' })], 0);
    social.apply(
      s,
      [act('cy', 'like', { post_id: 'p0' }), act('dee', 'like', { post_id: 'p0' }), act('ann', 'like', { post_id: 'p0' })],
      1,
    );
    social.apply(s, [act('cy', 'post', { text: 'new' })], 2);
    expect(feedIds(s, 'dee')).toEqual(['p0', 'p1']);
    s.params.rank = 'recency';
    s.globalRank = undefined;
    expect(feedIds(s, 'dee')).toEqual(['p1', 'p0']);
    expect(feedIds(s, 'bob')).toEqual(['p1']); // not its own post
  });

  it('interest: posts closest to the agent’s interest text by embedding similarity', () => {
    const words = ['football', 'goal', 'vote', 'election', 'guitar', 'song'];
    const embed = (text: string) => {
      const v = new Float32Array(words.length);
      for (const w of text.toLowerCase().split(/\W+/)) if (words.includes(w)) v[words.indexOf(w)]! += 1;
      return v;
    };
    const s = start(
      agentsOf(people, (id) => ({ interest: id === 'ann' ? 'football goal' : 'guitar song' })),
      { rank: 'interest' },
      { embed },
    );
    social.apply(
      s,
      [
        act('bob', 'post', { text: 'a late goal in the football final' }),
        act('cy', 'post', { text: 'the election vote' }),
        act('dee', 'post', { text: 'new guitar song' }),
      ],
      0,
    );
    expect(feedIds(s, 'ann', 1)).toEqual(['p0']);
    expect(feedIds(s, 'bob', 1)).toEqual(['p2']);
  });
});

describe('actions and cascades', () => {
  it('likes and reposts once per agent, follows real accounts, and tracks each seed post’s cascade', () => {
    const s = start(agentsOf(['a', 'b', 'c', 'd', 'e']), { seed_posts: [{ id: 'news', author: 'a', text: 'breaking' }] });
    const out = social.apply(
      s,
      [
        act('b', 'repost', { post_id: 'news' }),
        act('c', 'repost', { post_id: 'news' }),
        act('b', 'like', { post_id: 'news' }),
        act('b', 'like', { post_id: 'news' }),
        act('e', 'idle'),
      ],
      0,
    );
    expect(out.map((o) => o.output)).toEqual(['reposted news as p1', 'reposted news as p2', 'liked news', 'already liked news', 'idle']);
    social.apply(
      s,
      [
        act('d', 'repost', { post_id: 'p1' }),
        act('d', 'repost', { post_id: 'p2' }),
        act('e', 'follow', { agent_id: 'zz' }),
        act('e', 'follow', { agent_id: 'a' }),
      ],
      1,
    );
    const m = social.metrics(s, 1);
    expect(m).toMatchObject({ active_users: 2, posts: 0, reposts: 3, likes: 1, follows: 1 });
    // news -> b, c (depth 1) -> d via b (depth 2): size 3, depth 2, breadth 2
    expect(m).toMatchObject({ 'cascade.news.size': 3, 'cascade.news.depth': 2, 'cascade.news.breadth': 2 });
    expect(social.metrics(s, 0)).toMatchObject({ active_users: 0 }); // metrics of a step not the last applied
  });

  it('state saves to JSON and restores with the same feeds, metrics and further behaviour', () => {
    const s = start(
      agentsOf(ids.slice(0, 50)),
      { rank: 'follow', seed_posts: [{ author: 'u0', text: 'seed' }] },
      { graph: { generate: { model: 'barabasi_albert', m: 2, seed: 3 } } },
    );
    social.apply(s, [act('u5', 'repost', { post_id: 's0' }), act('u7', 'post', { text: 'hi' })], 0);
    const saved = JSON.parse(JSON.stringify(saveState(social, s)));
    const back = restoreState(social, saved);
    for (const id of ids.slice(0, 50)) expect(social.observe(back, id, 5)).toEqual(social.observe(s, id, 5));
    expect(social.metrics(back, 0)).toEqual(social.metrics(s, 0));
    const next = [act('u9', 'repost', { post_id: 'p1' }), act('u5', 'like', { post_id: 's0' })];
    expect(social.apply(back, next, 1)).toEqual(social.apply(s, next, 1));
    expect(social.metrics(back, 1)).toEqual(social.metrics(s, 1));
  });
});
