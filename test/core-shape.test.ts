// Issue 24 acceptance: the loop stays small and names no feature. Features (actions, executors,
// budgets, MCP, the scientist, Agents 1.0, the journal, telemetry) plug in through hooks; the
// loop's files may not mention them outside comments, and the rest of the core layer only where
// the same word means something else (KNOWN below, each with its reason).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const LOOP_FILE = 'src/core/runtime/run-loop.ts';
const CORE = 'src/core/runtime';
const FEATURE = /\b(actions?|executors?|mcp|budgets?|scientist|agents[-_]v1|compat|journal|telemetry|otel)\b/i;
/** The folders of features: the core imports none of them. */
const FEATURE_IMPORT =
  /from '\.\.\/(actions|executors|journal|cost|compat|scientist|taskboard|worldmodel|mcp|telemetry|import|sweep|view|cli|engine|api)\//;

/** A core line that names a feature: an import from a feature's folder, or a feature's name in code. */
const namesFeature = (text: string): boolean => (/^\s*import\b/.test(text) ? FEATURE_IMPORT.test(text) : FEATURE.test(text));

/** Source lines without comments. */
function code(file: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let inBlock = false;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((raw, i) => {
      let text = raw;
      if (inBlock) {
        const end = text.indexOf('*/');
        if (end === -1) return;
        text = text.slice(end + 2);
        inBlock = false;
      }
      text = text.replace(/\/\*.*?\*\//g, '');
      const open = text.indexOf('/*');
      if (open !== -1) {
        text = text.slice(0, open);
        inBlock = true;
      }
      text = text.replace(/(^|[^:'"`])\/\/.*$/, '$1');
      if (text.trim()) out.push({ line: i + 1, text });
    });
  return out;
}

/** The core layer's folders and files, as eslint.layers.js lists them. */
function coreLayer(): string[] {
  const block = /\bcore: \[([^\]]*)\]/.exec(readFileSync('eslint.layers.js', 'utf8'))?.[1] ?? '';
  return [...block.matchAll(/'([^']+)'/g)].map((m) => m[1]!);
}

/**
 * The same words in core files, meaning something else than a feature: each with the files it
 * may appear in, the text it may appear as, and why.
 */
interface Known {
  files: string[];
  text: RegExp;
  why: string;
}
const KNOWN: Known[] = [
  {
    files: [
      'src/core/llm/factory.ts',
      'src/core/llm/openai.ts',
      'src/core/llm/retry.ts',
      'src/core/memory/create-embedder.ts',
      'src/core/memory/openai-embedder.ts',
    ],
    text: /\bbudget\b|RetryBudget/,
    why: "the run-wide retry budget of the LLM and embedder clients (not the cost feature's budgets)",
  },
  {
    files: ['src/core/memory/token-budget.ts', 'src/core/agent/pipeline.ts'],
    text: /\bbudget\b|Budget\b|overBudget/,
    why: 'the prompt token budget (environment.max_prompt_tokens)',
  },
  {
    files: ['src/core/llm/mock.ts', 'src/core/llm/walk-meta.ts', 'src/core/llm/types.ts'],
    text: /\bexecutor\b/,
    why: "the mock's dry-run walk reads the executor names a state's commands declare in the SOP, to take the one that ends it",
  },
  {
    files: ['src/core/components/tool-slots.ts', 'src/core/components/registry.ts', 'src/core/agent/component-services.ts'],
    text: /\bexecutor\b|toolExecutor|MCP tool/,
    why: "a tool slot's executor, as the SOP names it (the API binds one; the message names MCP binding)",
  },
  {
    files: ['src/core/commands/commands.ts', 'src/core/commands/executor.ts', 'src/core/commands/lazy.ts'],
    text: /\bexecutors?\b/i,
    why: "the command contract: a SOP command names its executor; the contract is the core's, the executors are the features' (each contributes its own)",
  },
  {
    files: ['src/core/commands/executor.ts'],
    text: /'budget'/,
    why: "a sub-flow's run status 'budget' (its run stopped on a spent budget), as the run's status names it",
  },
  { files: ['src/core/agent/output.ts'], text: /'agents-v1'/, why: "the name-stripping mode 'agents-v1', a journaled setting's value" },
  { files: ['src/core/io/allow-file.ts'], text: /\bmcp\b/, why: "the consent file's sections, mcp and llm (docs/tools.md)" },
  {
    files: ['src/core/environment/message.ts', 'src/core/agent/window-chat.ts'],
    text: /'action'/,
    why: "the kind of a message that records a command's outcome",
  },
];

function coreFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? coreFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
}

describe('the step loop', () => {
  it('its file has at most 350 lines, and RunLoop at most 12 methods', () => {
    const text = readFileSync(LOOP_FILE, 'utf8');
    expect(text.split('\n').length).toBeLessThanOrEqual(350);
    const body = text.slice(text.indexOf('export class RunLoop'));
    const methods = body.match(/^ {2}(?:(?:private|protected|public|static|async|get|set|override|readonly) )*[A-Za-z_]\w*\s*\(/gm) ?? [];
    expect(methods.length).toBeGreaterThan(3);
    expect(methods.length).toBeLessThanOrEqual(12);
  });

  it('no file of the core loop names a feature outside comments', () => {
    const found: string[] = [];
    // the event vocabulary (events.ts) and the run's public options and result (options.ts) name what features record
    const files = coreFiles(CORE).filter((f) => !/\/(events|options)\.ts$/.test(f));
    expect(files).toContain(LOOP_FILE);
    for (const f of files) for (const { line, text } of code(f)) if (namesFeature(text)) found.push(`${f}:${line}: ${text.trim()}`);
    expect(found).toEqual([]);
  });

  it('no other file of the core layer names a feature, but for the known uses of the same words', () => {
    const core = coreLayer();
    expect(core).toEqual(expect.arrayContaining(['src/core/runtime', 'src/core/llm', 'src/core/agent', 'src/core/environment']));
    const files = core.filter((p) => p !== CORE).flatMap((p) => (p.endsWith('.ts') ? [p] : coreFiles(p)));
    const used = new Set<Known>();
    const found: string[] = [];
    for (const f of files)
      for (const { line, text } of code(f)) {
        if (!namesFeature(text)) continue;
        const known = KNOWN.find((k) => k.files.includes(f) && k.text.test(text));
        if (known) used.add(known);
        else found.push(`${f}:${line}: ${text.trim()}`);
      }
    expect(found).toEqual([]);
    // an exception no line needs any more is taken off the list
    expect(KNOWN.filter((k) => !used.has(k)).map((k) => k.why)).toEqual([]);
  });

  it('the check finds a feature name in code (and not in a comment)', () => {
    const lines = (src: string) => src.split('\n').filter((l) => namesFeature(l.replace(/\/\/.*$/, '')));
    expect(lines('const x = 1; // the budget plugin')).toEqual([]);
    expect(lines("if (plugin.name === 'budget') stop();")).toHaveLength(1);
    expect(lines("import { budgetPlugin } from '../cost/budget-plugin.js';")).toHaveLength(1);
    expect(lines("import { isSampleTurn } from '../memory/token-budget.js';")).toEqual([]);
  });
});

describe('the public entry points', () => {
  const names = (file: string) =>
    [...readFileSync(file, 'utf8').matchAll(/^export (?:type )?\{([^}]*)\}/gm)].flatMap((m) =>
      m[1]!
        .split(',')
        .map((n) => n.replace(/^\s*type\s+/, '').trim())
        .filter(Boolean),
    );

  it('the root export stays small (about 25 names); extension points are under sop/extend', async () => {
    const root = names('src/index.ts');
    expect(root.length).toBeGreaterThan(15);
    expect(root.length).toBeLessThanOrEqual(28);
    expect(root).toEqual(expect.arrayContaining(['loadSop', 'runSop', 'resumeRun', 'forkRun', 'EngineError']));
    const extend = names('src/extend.ts');
    expect(extend).toEqual(
      expect.arrayContaining(['definePlugin', 'RunPlugin', 'RunContext', 'Executor', 'ControllerStrategy', 'VectorIndex']),
    );
    expect(root.filter((n) => extend.includes(n))).toEqual([]);
    const mod = (await import('../src/extend.js')) as Record<string, unknown>;
    expect(typeof mod.definePlugin).toBe('function');
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { exports: Record<string, { import?: string }> };
    expect(pkg.exports['./extend']?.import).toBe('./dist/src/extend.js');
  });
});
