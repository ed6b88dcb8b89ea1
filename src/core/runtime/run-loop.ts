// The step loop: a run is a sequence of steps, each a Pregel/BSP superstep (docs/architecture.md):
//   plan        where the run goes and who acts: pure functions (./plan.ts) of the position, the
//               resolved SOP and the controller's answers (a plugin's transition, the judge, the
//               speaker strategy);
//   act         the actors' replies (one agent in a turn-based state): ./turn.ts;
//   apply       their messages and effects reach the environment in the plan's order: ./turn.ts;
//   checkpoint  the position, usage and each plugin's state (./snapshot.ts).
// Features plug in through the hooks of ./hooks.ts, composed by their rules (./compose.ts); the
// loop names none of them. Semantics follow Agents 1.0 (docs/agents-v1.md), with its clean
// behaviours unless the run's semantics flags (./semantics.ts) ask for its quirks.
import type { EnvironmentMemory } from '../environment/environment.js';
import { controllerHistory, controllerLast, controllerSummary } from '../environment/controller-view.js';
import { isRunSignal } from '../../shared/errors.js';
import { controllerLlm, DEFAULTS, type ResolvedState } from '../../format/sop/resolved.js';
import { assignOwn } from '../../shared/util/json.js';
import { isResumableError } from './checkpoint.js';
import { decide, observeAsync } from './compose.js';
import { createRunContext, type RunContext, type RunParts } from './context.js';
import { controllerStrategy, type ControllerContext } from './controllers/index.js';
import { askJudge } from './controllers/judge.js';
import type { RunSettings } from './events.js';
import type { OwnStep, TurnStep } from './hooks.js';
import { runStatus, type RunOptions, type RunResult, type RunStatus } from './options.js';
import { arrive, ASK_JUDGE, routed, ruledMove, start, turnTaken, type Arrival, type Move } from './plan.js';
import type { RunPosition, RunSnapshot } from './position.js';
import { RunCheckpoints } from './snapshot.js';
import { act, apply, prepare } from './turn.js';
import { samplePromptTokens } from './usage.js';

export type { RunOptions, RunResult, RunStatus } from './options.js';
export type { RunPosition } from './position.js';
export { resolveInputs, undeclaredInputs } from './inputs.js';

/** How a step ended: the run goes on, finishes in a state, or stops on a signal. */
type StepEnd = { next: 'go' | 'again' } | { next: 'finished'; state: string };

/** The step loop. Features plug in through `options.plugins`; src/api/engine/run-with-features.ts gives the built-in ones. */
export class RunLoop {
  /** The one context every part of the run reads (./context.ts). */
  readonly ctx: RunContext;
  private readonly parts: RunParts;
  private readonly checkpoints: RunCheckpoints;
  private readonly maxTurns: number;
  private stopRequested = false;
  /** A signal's state, entered next (a spent budget's on_exhausted). */
  private divert?: Move;

  constructor(private readonly options: RunOptions) {
    this.parts = createRunContext(options);
    this.ctx = this.parts.ctx;
    this.maxTurns = options.maxTurns ?? DEFAULTS.maxTurns;
    const ctx = this.ctx;
    // SOPs whose extract components write the run's shared memory journal it in checkpoints.
    const extracts = Object.values(options.sop.states).some((st) =>
      Object.values(st.components ?? {}).some((c) => c?.extract !== undefined),
    );
    const sharedCheckpointed = ctx.semantics.componentMemoryInCheckpoints && extracts;
    this.checkpoints = new RunCheckpoints(ctx, sharedCheckpointed ? ctx.components : undefined);
  }

  /** The run's shared memory. */
  get env(): EnvironmentMemory {
    return this.ctx.env;
  }
  /** Where the run stands. */
  get position(): RunPosition {
    return this.ctx.position;
  }

  /** Stop at the next step boundary (first Ctrl-C); the run ends `interrupted` and can be resumed. */
  requestStop(): void {
    this.stopRequested = true;
  }

  /** Everything needed to continue from this step boundary (messages come from the journal). */
  snapshot(): RunSnapshot {
    return this.checkpoints.snapshot();
  }

  async run(): Promise<RunResult> {
    const { ctx, options: o } = this;
    // the options that change behaviour, journaled and resumed (a resume or fork behaves the same)
    const settings: RunSettings = {
      max_turns: this.maxTurns,
      model: o.model,
      ...o.settings,
      name_stripping: o.nameStripping,
      stream: o.stream,
    };
    if (o.resume) await this.checkpoints.restore(o.resume, { settings, launch: o.launch });
    else {
      const { sop } = ctx;
      ctx.emit({
        type: 'run_started',
        run_id: ctx.runId,
        sop: sop.name,
        file: o.file,
        root: sop.root,
        seed: ctx.seed,
        inputs: ctx.inputs,
        llm: ctx.llm().id,
        time: new Date().toISOString(),
        document: sop,
        launch: o.launch,
        settings,
      });
      this.checkpoints.checkpoint();
    }
    this.parts.started();
    let status: RunStatus = 'finished';
    let error: Error | undefined;
    let finalState: string | undefined;
    let record: Record<string, string> = {};
    try {
      for (;;) {
        if (o.signal?.aborted || this.stopRequested) {
          status = 'interrupted';
          break;
        }
        if (this.position.turn >= this.maxTurns) {
          status = 'max_turns';
          break;
        }
        const end = await this.tick();
        if ('stop' in end) {
          status = end.stop.status;
          record = end.stop.record;
          break;
        }
        if (end.next === 'finished') {
          finalState = end.state;
          break;
        }
        if (end.next === 'again') continue; // a signal's state is entered next: no step was taken
        samplePromptTokens(ctx.usage, this.position.turn);
        this.checkpoints.checkpoint();
        // Let signal handlers (Ctrl-C) and timers run at each step boundary, even when no LLM call waited on I/O.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } catch (err) {
      error = err instanceof Error ? err : new Error(String(err));
      status = o.signal?.aborted || isResumableError(err) ? 'interrupted' : 'failed';
    }
    const outcome = decide(ctx.plugins, 'result') ?? {};
    await observeAsync(ctx.plugins, 'close');
    await this.parts.ending(status !== 'interrupted' && status !== 'failed'); // the last embeddings are paid for
    ctx.emit({
      type: 'run_finished',
      status,
      turns: this.position.turn,
      final_state: finalState,
      error: error?.message,
      ...record,
      usage: ctx.usage,
      time: new Date().toISOString(),
      ...(outcome.result !== undefined ? { result: outcome.result } : {}),
    });
    return {
      status,
      turns: this.position.turn,
      finalState,
      error,
      usage: ctx.usage,
      messages: ctx.env.messages,
      result: outcome.result,
      summary: outcome.summary,
      ...record,
    };
  }

  /** One step: plan, act, apply. A run signal (a spent budget) undoes the turn it interrupted before its message. */
  private async tick(): Promise<StepEnd | { stop: { status: RunStatus; record: Record<string, string> } }> {
    const { ctx } = this;
    this.parts.refresh(); // the prompt context is built once per step
    const messages = ctx.env.messages.length;
    let taken: string | undefined; // the state of the turn begun and not yet recorded
    try {
      const plan = await this.plan();
      if (plan.kind === 'finished') return { next: 'finished', state: plan.state };
      if (plan.kind === 'own') {
        // a plugin acts the step out whole (many agents at once); it is one turn of the run
        assignOwn(this.position, turnTaken(this.position, plan.state));
        taken = plan.state;
        await plan.step();
        return { next: 'go' };
      }
      for (const step of plan.steps) {
        assignOwn(this.position, turnTaken(this.position, step.state.name));
        taken = step.state.name;
        await prepare(ctx, step);
        this.parts.refresh(); // what plugins prepared may show in prompts (the scientist's relevant thoughts)
        await apply(ctx, step, await act(ctx, step));
        taken = undefined;
        this.parts.refresh(); // its effect may have changed what prompts show (memory files)
      }
      return { next: 'go' };
    } catch (err) {
      if (!isRunSignal(err)) throw err;
      // a turn whose message was not recorded is not taken
      if (taken && ctx.env.messages.length === messages) {
        this.position.turn--;
        this.position.states[taken]!.chatNums--;
      }
      if (err.kind === 'divert' && err.detail.target !== undefined) {
        ctx.emit({ type: 'warning', message: `${err.message}; moving to state "${err.detail.target}"` });
        this.divert = { target: err.detail.target, reason: err.detail.reason ?? 'direct' };
        return { next: 'again' };
      }
      return { stop: { status: runStatus(err.detail.status), record: err.detail.record ?? {} } };
    }
  }

  /** Plan the step: where the run goes (a signal's state, a plugin's or the SOP's rule, the judge), then who acts. */
  private async plan(): Promise<
    { kind: 'finished'; state: string } | { kind: 'act'; steps: TurnStep[] } | { kind: 'own'; state: string; step: OwnStep }
  > {
    const { ctx } = this;
    let arrival: Arrival;
    if (!this.position.started) arrival = start(this.position, ctx.resolved);
    else {
      const current = ctx.resolved.states[this.position.current]!;
      const move = this.divert ?? (await this.where(current));
      this.divert = undefined;
      arrival = arrive(this.position, ctx.resolved, move, ctx.semantics);
    }
    assignOwn(this.position, arrival.position);
    if (arrival.kind === 'begin' || arrival.kind === 'finished') this.enterVisit(arrival);
    for (const e of arrival.events) ctx.emit(e);
    if (arrival.kind === 'finished') return { kind: 'finished', state: arrival.state };
    if (arrival.kind === 'begin') return { kind: 'act', steps: [arrival.step] };
    const own = decide(ctx.plugins, 'ownStep', arrival.state);
    if (own) return { kind: 'own', state: arrival.state.name, step: own };
    return { kind: 'act', steps: [await this.who(arrival.state)] };
  }

  /** A visit begins: the state's messages start here; a competitive state does not see the previous state's summary. */
  private enterVisit(arrival: Arrival): void {
    if (arrival.kind !== 'begin') return;
    const env = this.ctx.env;
    env.stateStart = env.messages.length;
    if (env.visibility === 'competitive' && !this.ctx.semantics.keepSummaryOnEntry) env.summary = '';
  }

  /** Where the current state goes: a plugin's decision (command states), a rule of the SOP, else the judge's answer. */
  private async where(state: ResolvedState): Promise<Move> {
    const { ctx } = this;
    const rt = this.position.states[state.name]!;
    const ruled = ruledMove(state, rt, decide(ctx.plugins, 'transit', state, rt));
    if (ruled !== ASK_JUDGE) return ruled;
    const { key, target, known } = await askJudge(state, rt, this.controllerContext(), controllerSummary(ctx.env, state.name));
    if (!known)
      ctx.emit({ type: 'warning', message: `judge of state "${state.name}" answered key "${key}", which has no transition; staying` });
    ctx.emit({ type: 'judge', state: state.name, turn: this.position.turn, key, target, fallback: !known });
    return { target, reason: 'judge' };
  }

  /** Who acts next within the state: its controller strategy picks among its roles. */
  private async who(state: ResolvedState): Promise<TurnStep> {
    const { ctx } = this;
    const rt = this.position.states[state.name]!;
    let pick: { role: string; how: 'order' | 'random' | 'rule' | 'rule_fallback' | 'single' } = { role: state.roles[0]!, how: 'single' };
    if (state.roles.length > 1) {
      const picked = await controllerStrategy(state.controllerType).pick(state, rt, this.controllerContext());
      if (picked.warning) ctx.emit({ type: 'warning', message: picked.warning });
      pick = picked;
    }
    const r = routed(this.position, state, pick.role, pick.how, ctx.rng.state);
    assignOwn(this.position, r.position);
    for (const e of r.events) ctx.emit(e);
    return r.step;
  }

  /** What a controller strategy and the judge may use (src/core/runtime/controllers). */
  private controllerContext(): ControllerContext {
    const { ctx } = this;
    const view = {
      topK: ctx.topK(),
      minSimilarity: ctx.sop.environment?.min_similarity,
      sliding: ctx.semantics.slidingControllerWindow,
      chunks: ctx.semantics.summaryChunks,
    };
    return {
      rng: ctx.rng,
      semantics: ctx.semantics,
      turn: this.position.turn,
      history: (state) => controllerHistory(ctx.env, state, view),
      last: () => controllerLast(ctx.env, this.position.current),
      promptContext: (state) => ({ ...ctx.baseContext(), state: { name: state.name }, environment_prompt: ctx.envPrompt(state) }),
      render: (name, c) => ctx.templates.render(name, c),
      llm: (state) => controllerLlm(ctx.resolved, state),
      call: (messages, settings, meta) => ctx.call(messages, settings, meta),
    };
  }
}
