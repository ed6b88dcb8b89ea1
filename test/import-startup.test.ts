// Start-up of `import 'sop'` (issue 39, bench/startup.mjs): the root export loads no feature's run
// plugin, no engine and none of the heavy packages (bullmq, ioredis, DuckDB, the OpenAI client);
// they are loaded when a run starts (src/api/start.ts imports src/api/engine/run-with-features.ts
// then), and the run still works.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from './helpers/cli.js';
import { execAsync } from './helpers/exec.js';
import { writeLoadLogHook } from './helpers/load-log.js';

const ROOT = join(import.meta.dirname, '..');
const INDEX = pathToFileURL(join(ROOT, 'dist/src/index.js')).href;
const DEBATE = join(ROOT, 'examples/debate/debate.sop.json');
let dir: string;
let register: string;

beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-import-startup-'));
  register = writeLoadLogHook(dir); // every ES module loaded, to $SOP_TEST_LOAD_LOG
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The ES modules a Node process running `code` loads (URLs relative to the project), and its output. */
async function modulesLoaded(code: string): Promise<{ modules: string[]; stdout: string }> {
  const log = join(dir, `loads-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(log, '');
  const r = await execAsync(process.execPath, ['--import', pathToFileURL(register).href, '--input-type=module', '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
    env: {
      ...process.env,
      SOP_DEBUG: '',
      OTEL_EXPORTER_OTLP_ENDPOINT: '',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: '',
      SOP_TEST_LOAD_LOG: log,
    },
  });
  expect(r.status, r.stderr).toBe(0);
  const modules = readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((u) => u.replace(pathToFileURL(ROOT).href + '/', '').replace(/^.*\/node_modules\//, 'node_modules/'));
  return { modules, stdout: r.stdout };
}

/** Modules `import 'sop'` must not load: each is loaded by a run that uses its feature. */
const HEAVY = [
  /^node_modules\/(bullmq|ioredis|@duckdb|duckdb|openai|undici|@modelcontextprotocol)\//,
  /dist\/src\/api\/engine\/run-with-features\.js$/,
  /dist\/src\/core\/runtime\/run-loop\.js$/,
  /dist\/src\/features\/[^/]+\/plugin\.js$/,
  /dist\/src\/features\/agents-v1\/compat\/agents-v1\/plugin\.js$/,
  /dist\/src\/features\/population\/step\.js$/,
  /dist\/src\/features\/mcp\/run-hub\.js$/,
  /dist\/src\/features\/shards\//,
];
const heavy = (modules: string[]) => modules.filter((m) => HEAVY.some((re) => re.test(m)));

describe("import 'sop'", () => {
  it('loads no feature plugin, no engine and no heavy package', async () => {
    const { modules } = await modulesLoaded(`await import(${JSON.stringify(INDEX)});`);
    expect(modules.some((m) => m.endsWith('dist/src/index.js'))).toBe(true);
    expect(heavy(modules)).toEqual([]);
  });

  it('loads the engine and its feature plugins when a run starts, and the run works', async () => {
    const { modules, stdout } = await modulesLoaded(
      `const { loadSop, runSop } = await import(${JSON.stringify(INDEX)});\n` +
        `const r = await runSop(loadSop(${JSON.stringify(DEBATE)}), { llm: 'mock', maxTurns: 2 }).result;\n` +
        `console.log(JSON.stringify({ status: r.status, turns: r.turns }));`,
    );
    expect(modules).toContain('dist/src/api/engine/run-with-features.js');
    expect(modules).toContain('dist/src/features/actions/plugin.js');
    const result = JSON.parse(stdout.trim().split('\n').at(-1)!) as { status: string; turns: number };
    expect(result.turns).toBe(2);
    expect(result.status).not.toBe('failed');
  });
});
