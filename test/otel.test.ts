// OpenTelemetry: with OTEL_EXPORTER_OTLP_ENDPOINT set, a run sends its spans over OTLP/HTTP (run ->
// state visit -> turn -> LLM call, with GenAI attributes); --trace-content adds the prompts and
// replies, redacted; without the variable nothing of OpenTelemetry is loaded. The receiver is a
// node:http server in this test on 127.0.0.1, decoding the exporter's OTLP JSON.
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tracingEnabled } from '../src/features/telemetry/enabled.js';
import { tempDir } from './helpers/executor-context.js';
import { startHeldReplyServer } from './helpers/held-reply-server.js';
import { spawnCli } from './helpers/cli.js';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values: OtlpValue[] };
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: OtlpValue }>;
  events?: Array<{ name: string; attributes: Array<{ key: string; value: OtlpValue }> }>;
}
interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  service?: string;
  spans: OtlpSpan[];
}

const value = (v: OtlpValue): unknown =>
  v.stringValue ??
  (v.intValue !== undefined ? Number(v.intValue) : undefined) ??
  v.doubleValue ??
  v.boolValue ??
  v.arrayValue?.values.map(value);
const attrs = (list: OtlpSpan['attributes']) => Object.fromEntries(list.map((a) => [a.key, value(a.value)]));

let server: Server;
let port = 0;
const received: Received[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: Array<{ resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
      };
      for (const rs of body.resourceSpans)
        received.push({
          path: req.url ?? '',
          headers: req.headers,
          service: attrs(rs.resource.attributes)['service.name'] as string | undefined,
          spans: rs.scopeSpans.flatMap((s) => s.spans),
        });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawnCli([...args], {
      cwd: tempDir('sop-otel-'),
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** The @opentelemetry modules a small API run imports (an ESM resolve hook writes each URL to a file). */
async function otelModulesLoaded(extra: Record<string, string>): Promise<string[]> {
  const dir = tempDir('sop-otel-probe-');
  const log = join(dir, 'loaded.txt');
  writeFileSync(log, '');
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.includes('@opentelemetry')) appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
  return r;
}`,
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});`,
  );
  const probe = `
    const { runSop } = await import(${JSON.stringify(pathToFileURL(resolve('dist/src/index.js')).href)});
    await runSop(${JSON.stringify(debate)}, { llm: 'mock', maxTurns: 2 }).result;
  `;
  const env = { ...process.env, ...extra };
  if (!extra.OTEL_EXPORTER_OTLP_ENDPOINT) delete env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const code = await new Promise<number | null>((done, fail) => {
    const child = spawn(process.execPath, ['--import', pathToFileURL(join(dir, 'register.mjs')).href, '--input-type=module', '-e', probe], {
      env,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('error', fail);
    child.on('close', done);
  });
  expect(code).toBe(0);
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

const debate = resolve('examples/debate/debate.sop.json');
const cassette = resolve('examples/debate/debate.cassette.json');

describe('OpenTelemetry traces', () => {
  it('a replay of the debate sends run, state, turn and LLM call spans with GenAI attributes', async () => {
    received.length = 0;
    const r = await cli(['run', debate, '--llm', `replay:${cassette}`, '--quiet'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_HEADERS: 'x-team=sim',
      OTEL_SERVICE_NAME: 'debate-sim',
    });
    expect(r.code).toBe(0);
    // the run's spans were sent before the process ended
    const spans = received.flatMap((x) => x.spans);
    expect(received.every((x) => x.path === '/v1/traces' && x.headers['x-team'] === 'sim' && x.service === 'debate-sim')).toBe(true);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const runs = spans.filter((s) => s.name === 'sop.run debate');
    expect(runs).toHaveLength(1);
    const states = spans.filter((s) => s.name.startsWith('sop.state '));
    expect(states.map((s) => attrs(s.attributes)['sop.state'])).toEqual(
      expect.arrayContaining(['affirmative_prep', 'negative_prep', 'opening', 'open_floor']),
    );
    expect(states.every((s) => s.parentSpanId === runs[0]!.spanId)).toBe(true);
    const calls = spans.filter((s) => s.name.startsWith('chat '));
    expect(calls.length).toBeGreaterThan(10);
    for (const c of calls) {
      const a = attrs(c.attributes);
      expect(a['gen_ai.operation.name']).toBe('chat');
      expect(a['gen_ai.request.model']).toBe('gpt-4o-mini');
      expect(a['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(typeof a['gen_ai.usage.output_tokens']).toBe('number');
      expect(a['sop.state']).toBeTruthy();
      expect(c.traceId).toBe(runs[0]!.traceId);
      expect(c.events ?? []).toEqual([]); // no content without --trace-content
    }
    // an agent's call sits in its turn, in its state visit, in the run
    const agentCall = calls.find((c) => attrs(c.attributes)['sop.purpose'] === 'agent')!;
    const turn = byId.get(agentCall.parentSpanId!)!;
    expect(turn.name).toMatch(/^sop\.turn \d+$/);
    expect(attrs(turn.attributes)['sop.agent']).toBe(attrs(agentCall.attributes)['sop.agent']);
    expect(attrs(turn.attributes)['sop.role']).toBeTruthy();
    expect(byId.get(turn.parentSpanId!)!.name).toMatch(/^sop\.state /);
    // a summary refresh is a span around its call
    const summaryCall = calls.find((c) => attrs(c.attributes)['sop.purpose'] === 'summary');
    expect(summaryCall).toBeDefined();
    expect(byId.get(summaryCall!.parentSpanId!)!.name).toBe('sop.summary');
    expect(attrs(runs[0]!.attributes)['sop.status']).toBe('finished');
  }, 60_000);

  it('--trace-content adds the prompt and reply as span events, with secrets redacted', async () => {
    received.length = 0;
    const secret = 'sk-otel-secret-value-123456';
    const r = await cli(
      ['run', debate, '--llm', 'mock', '--quiet', '--trace-content', '--max-turns', '3', '--input', `topic=Keys like ${secret}`],
      { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `http://127.0.0.1:${port}/v1/traces`, DEBATE_API_KEY: secret },
    );
    expect(r.code).toBe(0);
    const calls = received.flatMap((x) => x.spans).filter((s) => s.name.startsWith('chat '));
    expect(calls.length).toBeGreaterThan(0);
    const events = calls.flatMap((c) => c.events ?? []);
    const prompts = events.filter((e) => e.name === 'gen_ai.content.prompt').map((e) => String(attrs(e.attributes)['gen_ai.prompt']));
    const replies = events
      .filter((e) => e.name === 'gen_ai.content.completion')
      .map((e) => String(attrs(e.attributes)['gen_ai.completion']));
    expect(prompts.length).toBe(calls.length);
    expect(replies.length).toBe(calls.length);
    expect(prompts.some((p) => p.includes('Keys like'))).toBe(true);
    expect(JSON.stringify(received)).not.toContain(secret);
  }, 60_000);

  it("a command's executor is a span in its turn", async () => {
    received.length = 0;
    const dir = tempDir('sop-otel-exec-');
    const file = join(dir, 'notes.sop.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'notes',
        memory: { notes: '' },
        agents: { Ada: { roles: { work: 'Writer' } } },
        root: 'work',
        states: {
          work: {
            roles: ['Writer'],
            commands: { note: { executor: 'memory', settings: { op: 'append', file: 'notes' } }, finish: { executor: 'finish' } },
            controller: { max_turns: 3 },
            next_states: { '1': 'end' },
          },
          end: { final: true },
        },
      }),
    );
    const r = await cli(['run', file, '--llm', 'mock', '--quiet', '--yes'], { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
    expect(r.code, r.stderr).toBe(0);
    const spans = received.flatMap((x) => x.spans);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const executors = spans.filter((s) => s.name.startsWith('sop.executor '));
    expect(executors.length).toBeGreaterThan(0);
    for (const e of executors) {
      const a = attrs(e.attributes);
      expect(a['sop.ok']).toBe(true);
      expect(a['sop.agent']).toBe('Ada');
      const turn = byId.get(e.parentSpanId!)!;
      expect(turn.name).toBe(`sop.turn ${String(a['sop.turn'])}`);
    }
  }, 60_000);

  it('Ctrl-C while the LLM is answering: the spans so far are sent, with finish reasons, before the process ends', async () => {
    received.length = 0;
    const server = await startHeldReplyServer(6); // the 7th chat request is held unanswered: the run is mid-way
    try {
      const child = spawnCli(['run', debate, '--llm', 'openai', '--base-url', server.url, '--quiet'], {
        cwd: tempDir('sop-otel-sigint-'),
        env: { ...process.env, OPENAI_API_KEY: 'test-key', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const done = new Promise<number | null>((r) => child.on('close', r));
      await Promise.race([
        server.held,
        done.then(() => {
          throw new Error(`the run ended before the held request: ${stderr}`);
        }),
      ]);
      child.kill('SIGINT');
      expect(await done).toBe(130);
      expect(stderr).toMatch(/Stopping after this turn/);
      const spans = received.flatMap((x) => x.spans);
      const run = spans.find((s) => s.name === 'sop.run debate');
      expect(attrs(run!.attributes)['sop.status']).toBe('interrupted');
      const calls = spans.filter((s) => s.name === 'chat gpt-4o-mini');
      expect(calls.length).toBe(7); // six answered, and the aborted one
      const answered = calls.filter((c) => attrs(c.attributes)['gen_ai.usage.input_tokens'] !== undefined);
      expect(answered).toHaveLength(6);
      for (const c of answered) expect(attrs(c.attributes)['gen_ai.response.finish_reasons']).toEqual(['stop']);
    } finally {
      server.release();
      await server.close();
    }
  }, 60_000);

  it('without an OTLP endpoint, tracing is off and nothing of OpenTelemetry is loaded', async () => {
    expect(tracingEnabled({})).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingEnabled({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://x', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
    // a run with tracing off imports no module of @opentelemetry; with it on, it does (the probe works)
    expect(await otelModulesLoaded({})).toEqual([]);
    const on = await otelModulesLoaded({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
    expect(on.some((u) => u.includes('@opentelemetry/sdk-trace'))).toBe(true);
  }, 30_000);
});
