// A shard job is untrusted input (docs/scale.md#one-step-over-many-workers): its signature and
// shape are checked before any call, its meta keeps only what a provider reads, its model name
// is used only as the worker allows, and what Redis holds as a reply is checked when read back.
import { describe, expect, it } from 'vitest';
import { modelFor } from '../src/features/shards/answer.js';
import { checkShardJob, metaOf, shardJobId, shardsOf, stepId, type ShardJobData } from '../src/features/shards/job.js';
import { parseReply, signedReply, verifiedReply } from '../src/features/shards/replies.js';
import { signJob } from '../src/shared/util/job-signature.js';
import type { CallMeta } from '../src/core/llm/types.js';

const SECRET = 'shards-job-test-secret-0123456789';
const step = stepId('run-1', { state: 'feed', visit: 1, step: 3 });
const call = (key: string) => ({
  key,
  messages: [
    { role: 'system', content: 'You are Ada.' },
    { role: 'user', content: 'Choose your action.' },
  ],
  model: 'gpt-4o-mini',
  temperature: 0.7,
  meta: { purpose: 'agent', state: 'feed', agent: key.split(':')[1], turn: 1, population: true },
});
const signed = (data: Omit<ShardJobData, 'sig'> | Record<string, unknown>, id = shardJobId(step, 0)) => ({
  ...data,
  sig: signJob(SECRET, id, data),
});
const good = () => ({ v: 1, step, shard: 0, calls: [call('3:a0'), call('3:a1')] });

describe('checkShardJob', () => {
  it('takes a signed job of the right shape', () => {
    const d = checkShardJob(SECRET, shardJobId(step, 0), signed(good()));
    expect(d.calls.map((c) => c.key)).toEqual(['3:a0', '3:a1']);
  });

  it('refuses an unsigned job, one signed with another secret, and one moved to another id', () => {
    expect(() => checkShardJob(SECRET, shardJobId(step, 0), good())).toThrow(/not signed/);
    const other = { ...good(), sig: signJob('another-secret-0123456789', shardJobId(step, 0), good()) };
    expect(() => checkShardJob(SECRET, shardJobId(step, 0), other)).toThrow(/does not match/);
    expect(() => checkShardJob(SECRET, shardJobId(step, 1), signed(good()))).toThrow(/does not match/);
  });

  it('refuses a signed job of the wrong shape with one line naming the part', () => {
    const bad: Array<[(d: ReturnType<typeof good>) => unknown, RegExp]> = [
      [(d) => ({ ...d, v: 2 }), /format version is 2/],
      [(d) => ({ ...d, step: '../../etc' }), /"step" is not a step id/],
      [(d) => ({ ...d, calls: [] }), /no "calls"/],
      [(d) => ({ ...d, calls: [call('3:a0'), call('3:a0')] }), /calls\/1\/key "3:a0" comes twice/],
      [(d) => ({ ...d, calls: [{ ...call('3:a0'), model: '' }] }), /calls\/0\/model/],
      [
        (d) => ({ ...d, calls: [{ ...call('3:a0'), messages: [{ role: 'tool', content: 'x' }] }] }),
        /calls\/0\/messages\/0 is not a message/,
      ],
      [(d) => ({ ...d, calls: [{ ...call('3:a0'), meta: { purpose: 'exec', state: 'feed', turn: 1 } }] }), /calls\/0\/meta/],
      [(d) => ({ ...d, calls: [{ ...call('3:a0'), maxTokens: 1.5 }] }), /calls\/0\/maxTokens/],
    ];
    for (const [change, message] of bad) {
      const data = change(good()) as Record<string, unknown>;
      expect(() => checkShardJob(SECRET, shardJobId(step, 0), signed(data))).toThrow(message);
    }
  });
});

describe('a shard job carries call facts only', () => {
  it("keeps the meta a provider reads, and drops the rest (the dry run's graph walk)", () => {
    const meta = {
      purpose: 'agent',
      state: 'feed',
      agent: 'a1',
      turn: 2,
      population: true,
      argChoices: { post_id: ['news'] },
      walk: { seed: 1, routes: [], turnsBefore: 0 },
    } as CallMeta;
    expect(metaOf(meta)).toEqual({
      purpose: 'agent',
      state: 'feed',
      agent: 'a1',
      turn: 2,
      population: true,
      argChoices: { post_id: ['news'] },
    });
  });

  it('splits calls into shards in call order', () => {
    expect(shardsOf([1, 2, 3, 4, 5], 2)).toEqual([[1, 2], [3, 4], [5]]);
    expect(stepId('run-1', { state: 'feed', visit: 1, step: 3 })).toBe(step);
    expect(stepId('run-1', { state: 'feed', visit: 1, step: 4 })).not.toBe(step);
  });
});

describe('modelFor: the model a worker asks', () => {
  it("uses the worker's --model whatever the job names, a job's model only when allowed, any with the mock", () => {
    expect(modelFor({ model: 'qwen', allow: [] }, 'gpt-4o')).toBe('qwen');
    expect(modelFor({ allow: ['gpt-4o-mini'] }, 'gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(modelFor({ allow: ['*'] }, 'anything')).toBe('anything');
    expect(modelFor({ allow: [], anyModel: true }, 'anything')).toBe('anything');
    expect(() => modelFor({ allow: ['gpt-4o-mini'] }, 'gpt-4o')).toThrow(
      'the shard asks for model "gpt-4o", which this worker does not allow (start it with --allow-model NAME, or --model NAME for every call)',
    );
  });
});

describe('parseReply: a stored reply read back', () => {
  it('reads a reply or an error, and nothing else', () => {
    const r = { content: 'ok', usage: { promptTokens: 3, completionTokens: 1 }, model: 'm', extra: 'dropped' };
    expect(parseReply(JSON.stringify(r))).toEqual({ content: 'ok', usage: { promptTokens: 3, completionTokens: 1 }, model: 'm' });
    expect(parseReply(JSON.stringify({ error: 'HTTP 500' }))).toEqual({ error: 'HTTP 500' });
    expect(parseReply('not json')).toBeUndefined();
    expect(parseReply(JSON.stringify({ content: 'ok', usage: { promptTokens: '3' } }))).toBeUndefined();
    expect(parseReply('null')).toBeUndefined();
  });
});

describe('verifiedReply: a reply in Redis is signed by the worker that stored it', () => {
  const reply = { content: '{"command":"idle","command_args":{}}', usage: { promptTokens: 30, completionTokens: 5 } };
  const refused = /its stored reply is refused: it is not signed with this run's SOP_QUEUE_SECRET/;

  it('reads a reply signed for its step and call, and refuses one altered, unsigned, moved or signed with another secret', () => {
    const text = signedReply(SECRET, step, '3:a0', reply);
    expect(verifiedReply(SECRET, step, '3:a0', text)).toEqual(reply);
    const altered = text.replace('idle', 'post');
    expect((verifiedReply(SECRET, step, '3:a0', altered) as { error: string }).error).toMatch(refused);
    expect((verifiedReply(SECRET, step, '3:a0', JSON.stringify(reply)) as { error: string }).error).toMatch(refused);
    expect((verifiedReply(SECRET, step, '3:a1', text) as { error: string }).error).toMatch(refused);
    const other = signedReply('another-secret-0123456789', step, '3:a0', reply);
    expect((verifiedReply(SECRET, step, '3:a0', other) as { error: string }).error).toMatch(refused);
    expect(verifiedReply(SECRET, step, '3:a0', 'not json')).toEqual({ error: 'its stored reply is not JSON' });
  });
});
