// Entries of the option table (./option-table.ts) for population states: how often a visit is saved
// whole (docs/population.md#durability), and where `sop fork` branches.
import { both, type OptionSpec } from './option-spec.js';

export const POPULATION_OPTIONS = {
  snapshotSteps: {
    api: 'snapshotSteps',
    flag: 'snapshot-steps',
    type: 'number',
    default: "each state's snapshots.steps, else 50",
    on: {
      run: "Population states: save a visit whole in a checkpoint once this many steps have passed since its last whole save, with twice the population's size in actions applied (default: each state's snapshots.steps, else 50)",
      ...both(
        "Population states: save a visit whole in a checkpoint once this many steps have passed since its last whole save (default: each state's snapshots.steps, else 50)",
      ),
    },
    doc: "population states: a visit is saved whole in a checkpoint once this many steps have passed since its last whole save, with twice the population's size in actions applied; in between a checkpoint says where it stands ([population.md](population.md#durability))",
  },
  snapshotActions: {
    api: 'snapshotActions',
    flag: 'snapshot-actions',
    type: 'number',
    default: "each state's snapshots.actions, else 1000000",
    on: {
      run: "Population states: save a visit whole once this many actions were applied since its last whole save, whatever the steps (default: each state's snapshots.actions, else 1000000, about 100 MB of journal)",
      ...both(
        "Population states: save a visit whole once this many actions were applied since its last whole save (default: each state's snapshots.actions, else 1000000)",
      ),
    },
    doc: 'population states: a visit is saved whole once this many actions were applied since its last whole save, whatever the steps (about 100 bytes of journal each)',
  },
  at: {
    api: false,
    flag: 'at',
    type: 'number',
    metavar: 'TURN',
    on: { fork: 'Turn to branch after (0: before the first turn)' },
  },
  step: {
    api: false,
    flag: 'step',
    type: 'number',
    metavar: 'STEP',
    on: {
      fork: "Population states: branch before this step of the run's population state, its state rebuilt from the last whole save and the journaled steps since, with no LLM call",
    },
  },
  state: {
    api: false,
    flag: 'state',
    type: 'string',
    metavar: 'NAME',
    on: { fork: 'With --step: the population state (default: the first one the run visited)' },
  },
} as const satisfies Record<string, OptionSpec>;
