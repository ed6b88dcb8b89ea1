// The layers of src/ and the features among them, enforced by eslint-plugin-boundaries in
// `npm run lint` (docs/architecture.md). Bottom to top:
//   shared   errors, utilities, safe files and paths, input reading
//   format   the SOP format: schema types, load, validate, template checks
//   core     llm, memory, environment, agent, components, runtime, prompt templates, human input, memory files
//   features each plugs into a run through its hooks (src/core/runtime/hooks.ts); one never imports another
//   api      the public API and what assembles a run (src/api, src/api/engine, src/api/loader, src/index.ts)
//   apps     the CLI, the viewer, sweeps and workers
// A layer imports only from the layers below it (and itself); a feature imports only the layers
// below it and itself. A file no pattern names is refused (boundaries/no-unknown-files), so a new
// folder is placed here when it is made.

/** Each feature and its folders (a feature may span folders that belong together). */
export const FEATURES = {
  actions: ['src/features/actions', 'src/features/actions/executors'],
  scientist: [
    'src/features/scientist',
    'src/features/scientist/executors',
    'src/features/scientist/taskboard',
    'src/features/scientist/worldmodel',
  ],
  journal: ['src/features/journal', 'src/features/journal/run-folder.ts'],
  cost: ['src/features/cost'],
  'agents-v1': ['src/features/agents-v1/compat', 'src/features/agents-v1/import'],
  mcp: ['src/features/mcp'],
  telemetry: ['src/features/telemetry'],
  population: ['src/features/population', 'src/features/population/worlds'],
  shards: ['src/features/shards'],
  batch: ['src/features/batch'],
  validity: ['src/features/validity'],
  seats: ['src/features/seats'],
  calibrate: ['src/features/calibrate'],
};

const LAYERS = {
  shared: [
    'src/shared/errors.ts',
    'src/shared/util',
    'src/shared/sandbox',
    'src/shared/io/read-input-file.ts',
    'src/shared/io/disk-full.ts',
    'src/shared/workspace/safe-file.ts',
    'src/shared/workspace/safe-path.ts',
  ],
  format: ['src/format/sop'],
  core: [
    'src/core/llm',
    'src/core/memory',
    'src/core/environment',
    'src/core/agent',
    'src/core/components',
    'src/core/runtime',
    'src/core/commands',
    'src/core/prompt',
    'src/core/io/human.ts',
    'src/core/io/answers-list.ts',
    'src/core/io/seats.ts',
    'src/core/io/allow-file.ts',
    'src/core/workspace',
  ],
  // what assembles the features into a run (and loads SOPs with every check)
  api: ['src/api', 'src/api/engine', 'src/api/loader', 'src/index.ts', 'src/extend.ts'],
  apps: ['src/apps/cli', 'src/apps/view', 'src/apps/sweep', 'src/apps/report', 'src/apps/seats', 'src/apps/calibrate'],
};

const pattern = (p) => (p.endsWith('.ts') ? p : `${p}/**`);

/** Element descriptors, most specific first (a file in a listed file wins over its folder). */
function elements() {
  const out = [];
  const all = [
    ...Object.entries(LAYERS).map(([type, paths]) => ({ type, paths })),
    ...Object.entries(FEATURES).map(([name, paths]) => ({ type: `feature:${name}`, paths })),
  ];
  // files first, then folders, so src/features/cost/check.ts is api and src/features/cost/* a feature
  for (const { type, paths } of all) for (const p of paths) if (p.endsWith('.ts')) out.push({ type, pattern: p, mode: 'file' });
  for (const { type, paths } of all)
    for (const p of paths) if (!p.endsWith('.ts')) out.push({ type, pattern: pattern(p), partialMatch: false });
  return out;
}

const below = { shared: [], format: ['shared'], core: ['shared', 'format'], feature: ['shared', 'format', 'core'] };
const featureTypes = Object.keys(FEATURES).map((n) => `feature:${n}`);

function policies() {
  const allow = (from, to) => ({ from: { element: { type: from } }, allow: { to: { element: { types: { anyOf: to } } } } });
  return [
    allow('shared', ['shared']),
    allow('format', ['shared', 'format']),
    allow('core', ['shared', 'format', 'core']),
    ...featureTypes.map((f) => allow(f, [...below.feature, f])),
    allow('api', ['shared', 'format', 'core', ...featureTypes, 'api']),
    allow('apps', ['shared', 'format', 'core', ...featureTypes, 'api', 'apps']),
  ];
}

/** The ESLint config block that enforces the layers over src/. */
export function layersConfig(boundaries) {
  return {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.generated.*'],
    plugins: { boundaries },
    settings: {
      'boundaries/elements': elements(),
      'boundaries/include': ['src/**/*.ts'],
      'import/resolver': { typescript: { project: 'tsconfig.json' } },
    },
    rules: {
      'boundaries/dependencies': ['error', { default: 'disallow', policies: policies() }],
      'boundaries/no-unknown-files': 'error',
    },
  };
}
