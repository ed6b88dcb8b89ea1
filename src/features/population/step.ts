// One visit of a population state, a step at a time (docs/population.md#the-step). A step:
//   1. interventions due at it (an injected action, a world parameter changed);
//   2. activation: which agents act;
//   3. every acting agent observes the step-start state (the world's snapshot and its own view);
//   4. they decide at once: LLM calls per agent or per archetype, under the run's concurrency
//      limit, each with its own effect key (step and agent), or a rule policy; surveys are asked;
//   5. their actions are ordered by the declared resolution (never completion order) and applied;
//   6. memories, metrics, and one `population_step` event.
// The visit's state (step, world, memories, metrics) is saved in the run's checkpoints.
import { EngineError } from '../../shared/errors.js';
import { renderText } from '../../core/prompt/templates.js';
import { LocalEmbedder } from '../../core/memory/local-embedder.js';
import type { ManyCall, ManyOutcome } from '../../core/runtime/call-many.js';
import type { PopulationAction, RunEvent } from '../../core/runtime/events.js';
import type { RunContext } from '../../core/runtime/context.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import { compileExpression } from './worlds/expr.js';
import { readEdgeListFile } from './worlds/graph-file.js';
import { orderActions } from './worlds/order.js';
import type { WorldRegistry } from './worlds/registry.js';
import { ruleRng, ruleRngs } from './worlds/rule.js';
import {
  resolveParams,
  restoreState,
  saveState,
  worldTools,
  type AnyWorld,
  type Json,
  type Metrics,
  type StepAction,
  type WorldInitContext,
} from './worlds/world.js';
import { dirname, resolve } from 'node:path';
import { activationRule, drawUniform } from './activation.js';
import { AgentMemory, type AgentMemoryEntry } from './agent-memory.js';
import {
  agentScope,
  decisionCall,
  decisionLlm,
  decisionMessages,
  parseAction,
  type Choice,
  type DecideSetup,
  type Seen,
} from './decide.js';
import { judgeOrder } from './judge.js';
import { usageCounts, usageSince } from './step-usage.js';
import { DeclaredMetrics } from './metrics.js';
import { loadPopulation, type Population } from './population.js';
import type { SavedAgentState } from './agent-state.js';
import { RuleProgram } from './rule-program.js';
import { compileTiers, decisionGroups, type DecisionGroups, type Tier } from './tiers.js';
import { clockText, orderPolicy, POPULATION_DEFAULTS, type PopulationStateSpec } from './state-spec.js';
import { sourcePath } from './validate.js';
import { inputFilePath, withInputFile } from './input-files.js';

export interface VisitOptions {
  ctx: RunContext;
  state: ResolvedState;
  spec: PopulationStateSpec;
  worlds: WorldRegistry;
  /** LLM calls a step makes at once. */
  concurrency: number;
  /** A full save of the visit at least every `steps` steps or `actions` applied actions (./snapshots.ts). */
  snapshots: { steps: number; actions: number };
}

/**
 * A visit as its checkpoint keeps it: whole (`world` and `memory`), or only where it stands, with
 * `base` the step of its last whole save (0: the visit's start), from which the journal's
 * `population_step` events rebuild it (./snapshots.ts).
 */
export interface SavedVisit {
  visit: number;
  step: number;
  world?: Json;
  memory?: Record<string, AgentMemoryEntry>;
  metrics: Metrics;
  /** The agent state of a state with rules as data (in every checkpoint, whole or not). */
  rules?: SavedAgentState;
  base?: number;
}

/** A whole save, with the journaled steps after it to do again (a resume). */
export interface RestoredVisit {
  /** Absent: the visit is rebuilt from its start. */
  full?: SavedVisit;
  replay: readonly StepEvent[];
  /** The agent state (rules as data) at the checkpoint's step. */
  rules?: SavedAgentState;
}

type StepEvent = Extract<RunEvent, { type: 'population_step' }>;

/** What one acting agent decided and how. */
interface Decided {
  i: number;
  tier: PopulationAction['tier'];
  choice: Choice;
}

export class PopulationVisit {
  private readonly memory: AgentMemory;
  private readonly declared: DeclaredMetrics;
  private readonly tiers: Tier[];
  private readonly setup: Omit<DecideSetup, 'turn'>;
  /** Agent state and declared policies (rules as data), when the state has them. */
  private readonly rules: RuleProgram | undefined;
  /** Step of the last whole save (0: the start), and the actions applied since. */
  private fullAt = 0;
  private actionsSinceFull = 0;
  /** Whether the state asks surveys (they may ask any agent, so every agent's memory is kept). */
  private readonly surveys: boolean;

  private constructor(
    private readonly o: VisitOptions,
    readonly pop: Population,
    readonly world: AnyWorld,
    private readonly worldState: unknown,
    readonly visit: number,
    /** Steps done in this visit. */
    public step: number,
    /** The metrics after the last step. */
    public metrics: Metrics,
  ) {
    const { spec } = o;
    this.memory = new AgentMemory(spec.memory);
    this.declared = new DeclaredMetrics(spec.metrics);
    const params = (worldState as { params?: unknown } | null)?.params ?? spec.world.params ?? {};
    const tools = worldTools(world, params, spec.actions);
    const names = tools.map((t) => t.name);
    this.rules =
      Object.keys(spec.agentState).length > 0 || spec.cognition.some((c) => c.cases)
        ? new RuleProgram(
            {
              pop,
              world,
              worldState: () => this.worldState,
              inputs: o.ctx.inputs,
              memoryOf: (id) => this.memory.text(id),
              hourOf: (step) => Math.floor(((((spec.startMinute + (step - 1) * spec.minutesPerStep) % 1440) + 1440) % 1440) / 60),
            },
            spec.agentState,
          )
        : undefined;
    const rules = this.rules;
    this.tiers = compileTiers(spec.cognition, names, rules ? (cases) => rules.policy(cases) : undefined);
    this.surveys = spec.interventions.some((iv) => iv.survey !== undefined);
    this.setup = { host: o.ctx, state: o.state, world, pop, tools, ...(spec.observe !== undefined ? { observe: spec.observe } : {}) };
  }

  /** Starts a visit (its agents loaded, its world made), or picks one up from its checkpoint. */
  static async open(o: VisitOptions, visit: number, restored?: RestoredVisit): Promise<PopulationVisit> {
    const saved = restored?.full;
    const { ctx, state, spec } = o;
    const pointer = `/states/${state.name}`;
    const baseDir = dirname(ctx.file);
    const population = withInputFile(spec.population, ctx.inputs, `${pointer}/population/source/file`);
    const pop = await loadPopulation(population, { baseDir, pointer: `${pointer}/population` });
    const world = o.worlds.get(spec.world.type);
    if (!world) throw new EngineError(`${pointer}/world/type: unknown world "${spec.world.type}"`, 'POPULATION');
    const init = await initContext(spec, baseDir, ctx.inputs, pointer);
    let worldState: unknown;
    if (saved?.world !== undefined) worldState = restoreState(world, saved.world, init);
    else {
      const params = renderStrings(spec.world.params ?? {}, ctx.baseContext(), `${pointer}/world/params`);
      const resolved = resolveWorldParams(world, params, `${pointer}/world/params`);
      const agents = pop.ids.map((id, i) => ({ id, attrs: pop.row(i) }));
      worldState = world.init(resolved, agents, ruleRng(ctx.seed, 0, `world:${state.name}`), init);
    }
    const v = new PopulationVisit(o, pop, world, worldState, visit, saved?.step ?? 0, saved?.metrics ?? {});
    if (saved) {
      v.memory.restore(saved.memory);
      v.fullAt = saved.step;
    }
    // the agent state is in every checkpoint: as it stood at the checkpoint's step
    if (restored?.rules) v.rules?.restore(restored.rules);
    else v.rules?.init(ctx.seed);
    if (restored) for (const e of restored.replay) v.replayStep(e);
    else
      ctx.emit({
        type: 'population_started',
        state: state.name,
        visit,
        agents: pop.size,
        columns: [...pop.columns],
        world: world.name,
        seed: ctx.seed,
        ...('file' in population.source ? { source: resolve(sourcePath(population.source.file, baseDir)) } : {}),
      });
    return v;
  }

  /** The visit for a checkpoint: whole when a whole save is due, else where it stands (a resume replays the steps since). */
  save(): SavedVisit {
    const { steps, actions } = this.o.snapshots;
    // a whole save holds about the population's size; the steps since hold their actions: one is
    // written when enough steps and at least twice the population's size in actions have gone by
    // (its bytes stay a small share of the journal's), or at most every `actions` actions
    const due = (this.step - this.fullAt >= steps && this.actionsSinceFull >= 2 * this.pop.size) || this.actionsSinceFull >= actions;
    const rules = this.rules ? { rules: this.rules.save() } : {};
    if (!due) return { visit: this.visit, step: this.step, metrics: this.metrics, base: this.fullAt, ...rules };
    this.fullAt = this.step;
    this.actionsSinceFull = 0;
    return {
      visit: this.visit,
      step: this.step,
      world: saveState(this.world, this.worldState),
      memory: this.memory.save(),
      metrics: this.metrics,
      ...rules,
    };
  }

  /**
   * A journaled step done again, with no decision made: its interventions, then the actions the
   * journal says the world applied, in their order; memories as the step left them.
   */
  private replayStep(e: StepEvent): void {
    const { spec } = this.o;
    const step = e.step;
    const injected = this.intervene(step);
    if (injected.length > 0) this.world.apply(this.worldState, injected, step);
    const clock = clockText(spec.startMinute + (step - 1) * spec.minutesPerStep);
    // observations are looked at again only when memories keep them
    const seen = spec.memory.observations > 0 ? this.observeAll(step, clock).seen : new Map<number, Seen>();
    const decided = e.actions.filter((a) => a.tier !== 'injected');
    const order = decided.slice(0, e.applied ?? decided.length).map((a) => ({ agent: a.agent, name: a.name, args: a.args, seq: 0 }));
    this.world.apply(this.worldState, order, step);
    this.remember(e.actions, seen, clock);
    this.step = step;
    this.metrics = e.metrics;
    this.actionsSinceFull += e.actions.length;
  }

  /** Who acts at a step, how each decides, and what each sees of the step-start state. */
  private observeAll(step: number, clock: string) {
    const { ctx, spec } = this.o;
    const minute = (step - 1) * spec.minutesPerStep;
    const stateOf = this.rules ? (i: number) => this.rules!.states.of(i) : undefined;
    const active = activationRule(spec.activation, ctx.seed).active(this.pop, step, spec.startMinute + minute, stateOf);
    const groups = decisionGroups(this.tiers, this.pop, active);
    // every acting agent observes the step-start state; a rule agent needs only its observation,
    // an agent asking an LLM also the public snapshot and its memory (for its prompt)
    const k = observeK(this.worldState);
    const ruleSeen = groups.rule.map(({ i }) => this.world.observe(this.worldState, this.pop.ids[i]!, k));
    const seen = new Map<number, Seen>();
    // (a survey may ask any agent, with its observation and memory: then every acting agent's is kept)
    const asking = this.surveys
      ? active
      : [...groups.perAgent.map((g) => g.i), ...groups.archetypes.flatMap((g) => g.members)].sort((a, b) => a - b);
    if (asking.length > 0) {
      const snapshot = JSON.stringify(this.world.snapshot(this.worldState, step));
      for (const i of asking) {
        const id = this.pop.ids[i]!;
        seen.set(i, { observation: this.world.observe(this.worldState, id, k), snapshot, memory: this.memory.text(id), clock, step });
      }
    }
    return { active, groups, ruleSeen, seen };
  }

  /** What the step's acting agents did and saw, in their memories (a rule agent's only when a survey or a declared rule may read it). */
  private remember(applied: readonly PopulationAction[], seen: Map<number, Seen>, clock: string): void {
    for (const a of applied)
      if (a.tier !== 'injected' && (this.surveys || this.rules !== undefined || a.tier !== 'rule'))
        this.memory.noteAction(a.agent, `${clock}: ${a.name}${argText(a.args)} -> ${a.output}`);
    for (const [i, s] of seen) this.memory.noteObservation(this.pop.ids[i]!, `${clock}: ${JSON.stringify(s.observation)}`);
  }

  /** One step of the visit; throws (after every call of the step has settled) when a call failed. */
  async runStep(): Promise<void> {
    const { ctx, spec, state } = this.o;
    const step = this.step + 1;
    const minute = (step - 1) * spec.minutesPerStep;
    const clock = clockText(spec.startMinute + minute);
    const turn = ctx.position.turn;
    const before = usageCounts(ctx.usage);
    const injected = this.intervene(step);
    const injectedOutcomes = injected.length > 0 ? this.world.apply(this.worldState, injected, step) : [];
    const { active, groups, ruleSeen, seen } = this.observeAll(step, clock);
    const { decided, surveys } = await this.decideAll(step, turn, groups, ruleSeen, seen);
    const actions: StepAction[] = [];
    const invalid: PopulationAction[] = [];
    const tierOf = new Map<string, PopulationAction['tier']>();
    for (const d of decided) {
      const id = this.pop.ids[d.i]!;
      tierOf.set(id, d.tier);
      if ('invalid' in d.choice) invalid.push({ agent: id, name: 'invalid', args: {}, ok: false, output: d.choice.invalid, tier: d.tier });
      else actions.push({ agent: id, name: d.choice.name, args: d.choice.args, seq: 0 });
    }
    const attrsOf = (id: string) => {
      const i = this.pop.indexOf(id);
      return i < 0 ? undefined : this.pop.row(i);
    };
    const policy = orderPolicy(spec, ctx.seed);
    const { order, refused } =
      policy.type === 'judge'
        ? await judgeOrder(ctx, state, this.world, actions, policy.seed, step, turn)
        : { order: orderActions(actions, policy, step, attrsOf), refused: [] };
    const outcomes = this.world.apply(this.worldState, order, step);
    const applied: PopulationAction[] = [
      ...injected.map((a, n) => ({
        agent: a.agent,
        name: a.name,
        args: a.args,
        ok: injectedOutcomes[n]!.ok,
        output: injectedOutcomes[n]!.output,
        tier: 'injected' as const,
      })),
      ...order.map((a, n) => ({
        agent: a.agent,
        name: a.name,
        args: a.args,
        ok: outcomes[n]!.ok,
        output: outcomes[n]!.output,
        tier: tierOf.get(a.agent)!,
      })),
      ...refused.map((a) => ({
        agent: a.agent,
        name: a.name,
        args: a.args,
        ok: false,
        output: 'refused by the judge',
        tier: tierOf.get(a.agent)!,
      })),
      ...invalid,
    ];
    this.remember(applied, seen, clock);
    this.actionsSinceFull += applied.length;
    this.rules?.commit(applied);
    const scopeOf = this.rules ? (i: number) => this.rules!.scope(i, step) : undefined;
    const metrics: Metrics = { ...this.world.metrics(this.worldState, step), ...this.declared.compute(step, applied, this.pop, scopeOf) };
    this.step = step;
    this.metrics = metrics;
    ctx.emit({
      type: 'population_step',
      state: state.name,
      visit: this.visit,
      step,
      turn,
      clock,
      minute,
      active: active.length,
      actions: applied,
      applied: order.length,
      metrics,
      ...(surveys.length > 0 ? { surveys } : {}),
      usage: usageSince(before, usageCounts(ctx.usage)),
    });
  }

  /** The interventions due at a step: world parameters set now, and the actions they inject. */
  private intervene(step: number): StepAction[] {
    const out: StepAction[] = [];
    for (const iv of this.o.spec.interventions) {
      if (iv.at !== step) continue;
      if (iv.set) {
        const params = (this.worldState as { params?: Record<string, unknown> } | null)?.params;
        if (!params)
          throw new EngineError(
            `/states/${this.o.state.name}/interventions: world "${this.world.name}" has no parameters to set`,
            'POPULATION',
          );
        Object.assign(params, iv.set);
      }
      if (iv.act) out.push({ agent: iv.act.agent, name: iv.act.name, args: iv.act.args ?? {}, seq: 0 });
    }
    return out;
  }

  /** Every acting agent's decision, and the survey answers: the step's LLM calls made at once (`ctx.callMany`). */
  private async decideAll(step: number, turn: number, groups: DecisionGroups, ruleSeen: readonly Json[], seen: Map<number, Seen>) {
    const { ctx, state, spec } = this.o;
    const setup: DecideSetup = { ...this.setup, turn };
    const decided: Decided[] = [];
    const calls: ManyCall[] = [];
    /** What each call's outcome becomes, by call. */
    const then: Array<(outcome: ManyOutcome) => void> = [];
    const late = spec.straggler?.default ?? { name: 'idle', args: {} };
    const choiceOf = (o: ManyOutcome): Choice => ('late' in o ? late : parseAction(o.reply, this.world, this.setup.tools));
    const rngOf = ruleRngs(ctx.seed, step);
    groups.rule.forEach(({ i, tier }, n) => {
      const id = this.pop.ids[i]!;
      const chosen = tier.policy!({ agent: id, observation: ruleSeen[n]!, step, rng: rngOf(id) });
      const first = chosen[0];
      decided.push({ i, tier: 'rule', choice: first ? { name: first.name, args: first.args } : IDLE });
    });
    for (const { i, tier } of groups.perAgent) {
      calls.push(decisionCall(setup, i, seen.get(i)!, decisionLlm(ctx.sop, state, tier.entry), `${step}:${this.pop.ids[i]!}`));
      then.push((o) => decided.push({ i, tier: 'per_agent', choice: choiceOf(o) }));
    }
    for (const group of groups.archetypes) {
      const lead = this.pop.ids[group.lead]!;
      const settings = decisionLlm(ctx.sop, state, group.tier.entry);
      calls.push(decisionCall(setup, group.lead, seen.get(group.lead)!, settings, `${step}:archetype:${lead}`));
      then.push((o) => {
        const choice = choiceOf(o);
        for (const i of group.members) decided.push({ i, tier: 'archetype', choice });
      });
    }
    const surveys: Array<{ survey: string; agent: string; question: string; answer: string }> = [];
    for (const iv of spec.interventions) {
      if (iv.at !== step || !iv.survey) continue;
      const survey = iv.survey;
      const settings = decisionLlm(ctx.sop, state, { tier: 'per_agent' });
      for (const i of this.surveyed(survey, step)) {
        const id = this.pop.ids[i]!;
        const s = seen.get(i) ?? { observation: null, snapshot: '', memory: this.memory.text(id), clock: '', step };
        const [system] = decisionMessages(setup, i, s);
        calls.push({
          messages: [system!, { role: 'user', content: survey.question }],
          settings,
          meta: { purpose: 'survey', state: state.name, agent: id, role: 'population', turn, population: true },
          key: `${step}:survey:${survey.name}:${id}`,
        });
        then.push((o) => {
          if ('reply' in o) surveys.push({ survey: survey.name, agent: id, question: survey.question, answer: o.reply.trim() });
        });
      }
    }
    const outcomes = await ctx.callMany(calls, {
      state,
      step: { state: state.name, visit: this.visit, step },
      concurrency: this.o.concurrency,
      ...(spec.straggler ? { straggler: { deadlineMs: spec.straggler.deadlineMs, then: spec.straggler.then } } : {}),
    });
    outcomes.forEach((o, n) => then[n]!(o));
    // rule agents first, the calls' in call order: what follows reads them in population order
    decided.sort((a, b) => a.i - b.i);
    surveys.sort((a, b) => (a.survey < b.survey ? -1 : a.survey > b.survey ? 1 : this.pop.indexOf(a.agent) - this.pop.indexOf(b.agent)));
    return { decided, surveys };
  }

  /** The agents a survey asks: those its `where` matches, at most `n` of them drawn with the seed, in population order. */
  private surveyed(survey: { name: string; where?: string; n?: number }, step: number): number[] {
    const where = survey.where ? compileExpression(survey.where) : undefined;
    let out: number[] = [];
    for (let i = 0; i < this.pop.size; i++) if (!where || where.evaluate(agentScope(this.pop, i)) === true) out.push(i);
    if (survey.n !== undefined && out.length > survey.n) {
      const seed = this.o.ctx.seed;
      out = out
        .map((i) => ({ i, r: drawUniform(seed, 'survey', survey.name, step, this.pop.ids[i]!) }))
        .sort((a, b) => a.r - b.r || a.i - b.i)
        .slice(0, survey.n)
        .map((x) => x.i)
        .sort((a, b) => a - b);
    }
    return out;
  }
}

const IDLE: Choice = { name: 'idle', args: {} };

const argText = (args: Record<string, unknown>): string => {
  const text = JSON.stringify(args);
  if (text === '{}') return '';
  return ` ${text.length > 120 ? `${text.slice(0, 117)}...` : text}`;
};

/** Items an agent observes: the world's feed size when it has one. */
function observeK(worldState: unknown): number {
  const params = (worldState as { params?: { feed_size?: unknown } } | null)?.params;
  return typeof params?.feed_size === 'number' ? params.feed_size : POPULATION_DEFAULTS.observeK;
}

/** What a world's init needs beyond its parameters: the follow graph (an edge list read from its file), an embedder. */
async function initContext(
  spec: PopulationStateSpec,
  baseDir: string,
  inputs: Readonly<Record<string, string>>,
  pointer: string,
): Promise<WorldInitContext> {
  let graph = spec.world.graph;
  const given = (graph as { file?: unknown } | undefined)?.file;
  const file = typeof given === 'string' ? inputFilePath(given, inputs, `${pointer}/world/graph/file`) : given;
  if (typeof file === 'string') {
    const { file: _f, ...rest } = graph as Record<string, unknown>;
    graph = { ...rest, edges: await readEdgeListFile(sourcePath(file, baseDir), file) };
  }
  const embedder = new LocalEmbedder();
  return { ...(graph !== undefined ? { graph } : {}), embed: (text: string) => embedder.embedOne(text, false) };
}

/** The world's parameters with their text rendered as templates (a seed post's text may name an input). */
function renderStrings(value: unknown, context: object, where: string): unknown {
  if (typeof value === 'string') return value.includes('{{') ? renderText(value, context, where) : value;
  if (Array.isArray(value)) return value.map((v, i) => renderStrings(v, context, `${where}/${i}`));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderStrings(v, context, `${where}/${k}`)]));
  return value;
}

function resolveWorldParams(world: AnyWorld, params: unknown, pointer: string): unknown {
  const r = resolveParams(world, params ?? {});
  if (r.ok) return r.params;
  const p = r.problems[0]!;
  throw new EngineError(`${pointer}${p.pointer}: ${p.message}`, 'POPULATION');
}
