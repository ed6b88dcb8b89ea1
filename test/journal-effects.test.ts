// The effect ledger: journaled results are reused, not performed again; an effect that started
// and has no result is performed again, for code only with approval or --auto-run.
import { describe, expect, it } from 'vitest';
import { EffectLedger, EffectNotApprovedError, indexEffects, llmEffectLabel } from '../src/features/journal/effects.js';
import { isResumableError } from '../src/features/journal/snapshot.js';
import type { RunEvent } from '../src/core/runtime/events.js';

function record() {
  const events: RunEvent[] = [];
  return {
    events,
    emit: (e: RunEvent) => {
      events.push(e);
    },
  };
}

describe('effect ledger', () => {
  it('journals side effects with stable keys that restart at each checkpoint', async () => {
    const { events, emit } = record();
    const ledger = new EffectLedger(emit, () => 3);
    ledger.reset(3);
    const a = await ledger.perform({ kind: 'code', label: 'run@work', marksStart: true }, async () => ({ exit: 0 }));
    const b = await ledger.perform({ kind: 'llm', label: 'agent:A@work', journalsResult: false }, async () => 'reply');
    expect([a.key, b.key]).toEqual(['3.0', '3.1']);
    expect(a.reused || b.reused).toBe(false);
    ledger.reset(4);
    expect((await ledger.perform({ kind: 'human', label: 'H@work' }, async () => 'yes')).key).toBe('4.0');
    expect(events.map((e) => e.type)).toEqual(['effect_started', 'effect_finished', 'effect_finished']);
  });

  it('reuses a journaled result instead of performing the effect again', async () => {
    const journal: RunEvent[] = [
      { type: 'effect_started', key: '5.0', kind: 'code', label: 'run@work', turn: 5 },
      { type: 'effect_finished', key: '5.0', kind: 'code', label: 'run@work', turn: 5, result: { exit: 0, out: 'done' } },
      {
        type: 'llm_call',
        purpose: 'agent',
        state: 'work',
        agent: 'A',
        turn: 6,
        model: 'm',
        usage: { promptTokens: 1, completionTokens: 2 },
        ms: 1,
        prompt_chars: 3,
        reply: 'hello',
        effect: '5.1',
      },
    ];
    const { events, emit } = record();
    const ledger = new EffectLedger(emit, () => 5, indexEffects(journal));
    ledger.reset(5);
    let ran = 0;
    const code = await ledger.perform({ kind: 'code', label: 'run@work', marksStart: true, rerunNeedsApproval: true }, async () => {
      ran++;
      return { exit: 1 };
    });
    const llm = await ledger.perform({ kind: 'llm', label: llmEffectLabel('agent', 'work', 'A'), journalsResult: false }, async () => {
      ran++;
      return { content: 'new', usage: { promptTokens: 0, completionTokens: 0 } };
    });
    expect(ran).toBe(0);
    expect(code).toMatchObject({ reused: true, value: { exit: 0, out: 'done' } });
    expect(llm).toMatchObject({ reused: true, value: { content: 'hello' } });
    expect(events).toEqual([expect.objectContaining({ type: 'effect_finished', key: '5.0', reused: true })]);
  });

  it('performs anew, with a warning, when the journal holds a different effect at that step', async () => {
    const journal: RunEvent[] = [{ type: 'effect_finished', key: '0.0', kind: 'human', label: 'Ann@s', turn: 0, result: 'old' }];
    const { events, emit } = record();
    const ledger = new EffectLedger(emit, () => 0, indexEffects(journal));
    const r = await ledger.perform({ kind: 'human', label: 'Bob@s' }, async () => 'new');
    expect(r).toMatchObject({ reused: false, value: 'new' });
    expect(events[0]).toMatchObject({ type: 'warning', message: expect.stringContaining('performing it anew') });
  });

  it('does not run interrupted code again without approval; stops the run as resumable', async () => {
    const journal: RunEvent[] = [{ type: 'effect_started', key: '2.0', kind: 'code', label: 'run@work', turn: 2 }];
    const spec = { kind: 'code', label: 'run@work', marksStart: true, rerunNeedsApproval: true };
    let ran = 0;
    const fn = async () => {
      ran++;
      return 'ok';
    };

    const refused = new EffectLedger(
      () => {},
      () => 2,
      indexEffects(journal),
      { approve: async () => false },
    );
    refused.reset(2);
    const err = await refused.perform(spec, fn).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EffectNotApprovedError);
    expect((err as Error).message).toMatch(/may have run.*options\.autoRun/);
    expect(isResumableError(err)).toBe(true);
    expect(ran).toBe(0);

    const questions: string[] = [];
    const asked = new EffectLedger(
      () => {},
      () => 2,
      indexEffects(journal),
      {
        approve: async (q) => {
          questions.push(q);
          return true;
        },
      },
    );
    asked.reset(2);
    expect((await asked.perform(spec, fn)).value).toBe('ok');
    expect(questions[0]).toMatch(/code "run@work" started before the run was interrupted/);

    const { events, emit } = record();
    const auto = new EffectLedger(emit, () => 2, indexEffects(journal), { autoRun: true });
    auto.reset(2);
    await auto.perform(spec, fn);
    expect(ran).toBe(2);
    expect(events[0]).toMatchObject({ type: 'warning', message: expect.stringContaining('performing it again') });
  });

  it('asks a human again (no approval needed) when the question had no recorded answer', async () => {
    const journal: RunEvent[] = [{ type: 'effect_started', key: '0.0', kind: 'human', label: 'H@s', turn: 0 }];
    const ledger = new EffectLedger(
      () => {},
      () => 0,
      indexEffects(journal),
    );
    expect((await ledger.perform({ kind: 'human', label: 'H@s', marksStart: true }, async () => 'answer')).value).toBe('answer');
  });
});
