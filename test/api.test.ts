// The public API (src/index.ts, imported as 'sop' through package.json "exports"): load and
// validate SOPs, run one and stream its events, keep a run in memory or in a folder, stop and
// resume it, plug in a provider of your own, and get compile-time errors from defineSop.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { codeSop } from './helpers/code-sop.js';
import { startOpenAiServer } from './helpers/openai-server.js';
import {
  EngineError,
  SopError,
  forkRun,
  loadSop,
  resumeRun,
  runSop,
  validateSop,
  type ChatRequest,
  type LlmProvider,
  type RunEvent,
} from '../src/index.js';
import { type RunPlugin, definePlugin } from '../src/extend.js';
import { requireBuiltPackage } from './helpers/cli.js';
import { execAsync } from './helpers/exec.js';

const DEBATE = 'examples/debate/debate.sop.json';
const CASSETTE = 'replay:examples/debate/debate.cassette.json';
const tmp = mkdtempSync(join(tmpdir(), 'sop-api-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("import { loadSop, runSop } from 'sop'", () => {
  it('replays the debate from the repo root through the package self-reference: 17 messages, finished', async () => {
    const script =
      "import { loadSop, runSop } from 'sop'; const sop = loadSop('examples/debate/debate.sop.json'); " +
      "const h = runSop(sop, { llm: 'replay:examples/debate/debate.cassette.json' }); let n=0; " +
      "for await (const e of h) if (e.type==='message') n++; console.log(n, (await h.result).status)";
    requireBuiltPackage();
    const r = await execAsync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe('17 finished');
  });

  it('streams every event in order and keeps a run without `out` in memory (no folder written)', async () => {
    const before = readdirSync('.');
    const handle = runSop(loadSop(DEBATE), { llm: CASSETTE });
    const types: string[] = [];
    for await (const e of handle) types.push(e.type);
    const result = await handle.result;
    expect(result.status).toBe('finished');
    expect(types[0]).toBe('run_started');
    expect(types[types.length - 1]).toBe('run_finished');
    expect(types.filter((t) => t === 'message')).toHaveLength(result.messages.length);
    expect(handle.dir).toBeUndefined();
    expect(readdirSync('.')).toEqual(before);
  });

  it('with `out`, writes a run folder; stop() interrupts at a turn boundary and resumeRun finishes it like an uninterrupted run', async () => {
    const reference = await runSop(DEBATE, { llm: CASSETTE }).result;
    const handle = runSop(DEBATE, { llm: CASSETTE, out: tmp });
    for await (const e of handle) if (e.type === 'checkpoint' && e.turn === 5) handle.stop();
    const first = await handle.result;
    expect(first.status).toBe('interrupted');
    expect(first.turns).toBe(5);
    expect(existsSync(join(handle.dir!, 'journal.jsonl'))).toBe(true);
    const resumed = resumeRun(handle.dir!);
    const messages: string[] = [];
    for await (const e of resumed) if (e.type === 'message') messages.push(e.message.content);
    const done = await resumed.result;
    expect(done.status).toBe('finished');
    expect(done.messages.map((m) => m.content)).toEqual(reference.messages.map((m) => m.content));
    expect(messages).toEqual(reference.messages.slice(first.messages.length).map((m) => m.content));
  });

  it('forkRun continues a finished run from an earlier turn in a new folder, with the same replies', async () => {
    const original = runSop(DEBATE, { llm: CASSETTE, out: join(tmp, 'fork-src') });
    const whole = await original.result;
    expect(whole.status).toBe('finished');
    const fork = forkRun(original.dir!, 3, { out: join(tmp, 'forks') });
    const done = await fork.result;
    expect(done.status).toBe('finished');
    expect(fork.dir).not.toBe(original.dir);
    expect(existsSync(join(fork.dir!, 'journal.jsonl'))).toBe(true);
    expect(done.messages.map((m) => m.content)).toEqual(whole.messages.map((m) => m.content));
  });

  it('runs with a provider of your own', async () => {
    const seen: string[] = [];
    const llm: LlmProvider = {
      id: 'echo',
      async chat(request: ChatRequest) {
        seen.push(request.meta?.purpose ?? '');
        return {
          content: request.meta?.purpose === 'judge' ? '1' : `turn ${request.meta?.turn}`,
          usage: { promptTokens: 1, completionTokens: 1 },
        };
      },
    };
    const result = await runSop(DEBATE, { llm, maxTurns: 6, inputs: { topic: 'tests' } }).result;
    expect(seen).toContain('agent');
    expect(result.usage.calls).toBe(seen.length);
    expect(result.messages.some((m) => m.content.startsWith('turn '))).toBe(true);
  });

  it('sandboxes code by default when bubblewrap works, like the CLI; sandbox: false turns it off', async () => {
    const { sandboxSupport } = await import('../src/shared/sandbox/sandbox.js');
    const sop = codeSop('code-once');
    const llm: LlmProvider = {
      id: 'coder',
      async chat(request: ChatRequest) {
        const ran = request.messages.some((m) => m.role === 'assistant');
        const command = ran
          ? { command: 'finish', command_args: { result: 'done' } }
          : { command: 'run_code', command_args: { code: 'print(6 * 7)' } };
        return { content: JSON.stringify(command), usage: { promptTokens: 1, completionTokens: 1 } };
      },
    };
    const codeResult = async (sandbox?: boolean) => {
      const r = await runSop(sop, {
        llm,
        autoRun: true,
        workspace: mkdtempSync(join(tmp, 'ws-')),
        ...(sandbox === undefined ? {} : { sandbox }),
      }).result;
      expect(r.status).toBe('finished');
      return r.messages.find((m) => m.sender === 'run_code')?.content ?? '';
    };
    expect(await codeResult(false)).toMatch(/^The python code ran in the run's python session \(cell 1\): exit code 0\./);
    const support = sandboxSupport();
    if (!support.ok) {
      console.warn(`api: the default-sandbox case is skipped: ${support.reason}`);
      return;
    }
    expect(await codeResult()).toMatch(/^The python code ran in the run's python session \(cell 1\) in the sandbox: exit code 0\./);
  }, 60_000);

  it('applies maxReplyBytes to runs made from code: a reply over the cap stops the run as interrupted', async () => {
    const server = await startOpenAiServer({ reply: () => 'x'.repeat(4000) });
    try {
      const result = await runSop(DEBATE, { llm: 'openai', baseUrl: server.url, maxReplyBytes: 1000, maxTurns: 3 }).result;
      expect(result.status).toBe('interrupted');
      expect(result.error?.message).toMatch(/larger than the cap of 1000 bytes/);
      expect(result.messages.some((m) => m.content.includes('xxxx'))).toBe(false);
    } finally {
      await server.close();
    }
  });

  it('plugs a feature of your own in through the run hooks: prompt parts, after a message, checkpoints', async () => {
    const systems: string[] = [];
    const llm: LlmProvider = {
      id: 'capture',
      async chat(request: ChatRequest) {
        if (request.meta?.purpose === 'agent') systems.push(request.messages[0]!.content);
        return { content: request.meta?.purpose === 'judge' ? '0' : 'ok', usage: { promptTokens: 1, completionTokens: 1 } };
      },
    };
    let recorded = 0;
    const counter = definePlugin<RunPlugin>({
      name: 'counter',
      make: () => ({
        agentPrompt: (a) => ({ ...a, parts: [...a.parts, { kind: 'system', text: 'PLUGIN LINE' }] }),
        afterMessage: () => {
          recorded++;
        },
        checkpoint: () => ({ recorded }),
        restoreCheckpoint: () => {},
      }),
    });
    const handle = runSop(DEBATE, { llm, maxTurns: 4, inputs: { topic: 'tests' }, plugins: (ctx) => [counter(ctx)!] });
    const saved: unknown[] = [];
    for await (const e of handle) if (e.type === 'checkpoint') saved.push(e.snapshot.extensions?.counter);
    const result = await handle.result;
    expect(systems.length).toBeGreaterThan(0);
    expect(systems.every((s) => s.includes('PLUGIN LINE'))).toBe(true);
    expect(recorded).toBe(result.messages.length);
    expect(saved[saved.length - 1]).toEqual({ recorded });
  });

  it('loadSop throws a SopError with diagnostics (an EngineError with a code); validateSop lists them', () => {
    const bad = { ...loadSop(DEBATE), root: 'nowhere' };
    let caught: unknown;
    try {
      loadSop(bad);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(SopError);
    expect(caught).toBeInstanceOf(EngineError);
    expect((caught as SopError).code).toBe('SOP_INVALID');
    expect((caught as SopError).diagnostics.some((d) => d.pointer === '/root')).toBe(true);
    const v = validateSop(bad);
    expect(v.ok).toBe(false);
    expect(v.errors.map((d) => d.pointer)).toContain('/root');
    expect(validateSop(DEBATE)).toMatchObject({ ok: true, errors: [] });
  });

  it('a run that cannot start rejects its result and throws from its iterator', async () => {
    const handle = runSop(DEBATE, { llm: 'replay:no/such/cassette.json' });
    await expect(handle.result).rejects.toThrow(/cassette/);
    const events: RunEvent[] = [];
    await expect(
      (async () => {
        for await (const e of handle) events.push(e);
      })(),
    ).rejects.toThrow(/cassette/);
    expect(events).toEqual([]);
  });
});

describe('defineSop types a SOP written in TypeScript', () => {
  const tsc = (file: string) =>
    execAsync(
      process.execPath,
      [
        'node_modules/typescript/bin/tsc',
        '--noEmit',
        '--strict',
        '--skipLibCheck',
        '--module',
        'nodenext',
        '--moduleResolution',
        'nodenext',
        '--target',
        'es2022',
        '--types',
        'node',
        file,
      ],
      { encoding: 'utf8' },
    );

  it("compiles with controller type 'order' and fails to compile with 'ordr'", async () => {
    requireBuiltPackage(); // 'sop' resolves to dist/src/index.d.ts
    const ok = await tsc('test/fixtures/api-types/ok.ts');
    expect(ok.stdout + ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    const bad = await tsc('test/fixtures/api-types/bad.ts');
    expect(bad.status).not.toBe(0);
    expect(bad.stdout).toMatch(/bad\.ts\(\d+,\d+\): error TS\d+:[\s\S]*ordr/);
  }, 120_000);
});
