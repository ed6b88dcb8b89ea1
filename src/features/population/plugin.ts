// The population feature's plugin (docs/population.md): it acts out every step of a population
// state (`ownStep`: many agents at once, then their world applies what they did), moves the run
// on when a transition's metric condition holds or the visit's max_steps are done (`transit`),
// shows each population state's step and metrics to every other prompt
// (`{{population.STATE.metrics.NAME}}`, with dots in names written as _: cascade_news_size),
// and keeps each visit (step, world, memories, metrics) in the run's checkpoints.
import { definePlugin, type PluginMaker } from '../../core/runtime/hooks.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import { compileExpression, type CompiledExpression } from './worlds/expr.js';
import { defaultWorlds, type WorldRegistry } from './worlds/registry.js';
import type { Metrics } from './worlds/world.js';
import { metricScope } from './metrics.js';
import { DEFAULT_CONCURRENCY, isPopulationState, populationStateSpec, usesPopulation, type PopulationStateSpec } from './state-spec.js';
import { restoredVisit, SNAPSHOT_DEFAULTS } from './snapshots.js';
import { PopulationVisit, type SavedVisit } from './step.js';
import type { RunEvent } from '../../core/runtime/events.js';

export interface PopulationOptions {
  /** LLM calls a population step makes at once (default 64). */
  concurrency?: number;
  /** The worlds a SOP may name (default: the built-ins). */
  worlds?: WorldRegistry;
  /**
   * A visit is saved whole in a checkpoint at least every this many steps (default: the state's
   * `snapshots.steps`, else 50; ./snapshots.ts).
   */
  snapshotSteps?: number;
  /** ... or every this many applied actions (default: the state's `snapshots.actions`, else 1,000,000). */
  snapshotActions?: number;
}

export { DEFAULT_CONCURRENCY, usesPopulation };

export function populationPlugin(options: PopulationOptions = {}): PluginMaker {
  return definePlugin({
    name: 'population',
    uses: usesPopulation,
    make(ctx) {
      const worlds = options.worlds ?? defaultWorlds();
      const concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
      /** A state's thresholds of whole saves: the run's options, else the state's `snapshots`, else the defaults. */
      const snapshotsOf = (spec: PopulationStateSpec) => ({
        steps: Math.max(1, options.snapshotSteps ?? spec.snapshots.steps ?? SNAPSHOT_DEFAULTS.steps),
        actions: Math.max(1, options.snapshotActions ?? spec.snapshots.actions ?? SNAPSHOT_DEFAULTS.actions),
      });
      const specs = new Map<string, { spec: PopulationStateSpec; transitions: Array<{ when: CompiledExpression; to: string }> }>();
      const specOf = (state: ResolvedState) => {
        let s = specs.get(state.name);
        if (!s) {
          const spec = populationStateSpec(state.def);
          s = { spec, transitions: spec.transitions.map((t) => ({ when: compileExpression(t.when), to: t.to })) };
          specs.set(state.name, s);
        }
        return s;
      };
      const visits = new Map<string, PopulationVisit>();
      /** Visits of the checkpoint a resumed run starts from, picked up at their next step. */
      let saved: Record<string, SavedVisit> = {};
      /** The journal up to the checkpoint resumed from: the steps to do again after a visit's last whole save. */
      let history: readonly RunEvent[] = [];
      /** Where a state's current visit stands: its step and last metrics. */
      const standing = (name: string): { visit: number; step: number; metrics: Metrics } | undefined => visits.get(name) ?? saved[name];

      return {
        ownStep(state) {
          if (!isPopulationState(state.def)) return undefined;
          return async () => {
            const visit = ctx.position.states[state.name]!.visits;
            let v = visits.get(state.name);
            if (!v || v.visit !== visit) {
              const from = saved[state.name]?.visit === visit ? saved[state.name] : undefined;
              const restored = from ? restoredVisit(state.name, from, history) : undefined;
              v = await PopulationVisit.open(
                { ctx, state, spec: specOf(state).spec, worlds, concurrency, snapshots: snapshotsOf(specOf(state).spec) },
                visit,
                restored,
              );
              visits.set(state.name, v);
              delete saved[state.name];
              if (Object.keys(saved).length === 0) history = []; // every visit rebuilt: the journal is let go
            }
            await v.runStep();
          };
        },

        transit(state) {
          if (!isPopulationState(state.def)) return undefined;
          const { spec, transitions } = specOf(state);
          const now = standing(state.name);
          if (now && now.step > 0) {
            const scope = metricScope(now.metrics);
            for (const t of transitions) if (t.when.evaluate(scope) === true) return { target: t.to, reason: 'direct' };
          }
          if ((now?.step ?? 0) >= spec.maxSteps) return { target: state.nextStates['1'] ?? state.name, reason: 'max_turns' };
          return { target: state.name, reason: 'direct' };
        },

        context(c) {
          const population: Record<string, { step: number; metrics: Record<string, number | null> }> = {};
          for (const name of Object.keys(ctx.sop.states)) {
            const now = standing(name);
            if (now) population[name] = { step: now.step, metrics: metricScope(now.metrics) };
          }
          return Object.keys(population).length > 0 ? { ...c, population } : c;
        },

        checkpoint() {
          const out: Record<string, SavedVisit> = { ...saved };
          for (const [name, v] of visits) out[name] = v.save();
          return out;
        },

        restoreCheckpoint(state, context) {
          visits.clear();
          saved = { ...((state ?? {}) as Record<string, SavedVisit>) };
          history = context.events;
        },
      };
    },
  });
}
