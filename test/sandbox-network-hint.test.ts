// Code that fails because the default sandbox has no network (pip's "No matching distribution
// found", a name that does not resolve) says so and names --sandbox-network: in the result the
// agent's next prompt holds, and on the terminal. The start warning of --sandbox-network names the
// flag, not the API option.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxSupport } from '../src/shared/sandbox/sandbox.js';
import { networkHint } from '../src/features/actions/executors/network-hint.js';
import { shownText, startOpenAiServer, type ChatRequestBody, type TestServer } from './helpers/openai-server.js';
import { codeSop } from './helpers/code-sop.js';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';

const command = (name: string, args: Record<string, unknown>) => JSON.stringify({ command: name, command_args: args });
// --isolated: pip ignores this machine's local wheel folders and indexes, so it needs PyPI itself
const PIP = 'python3 -m pip download --isolated --retries 0 --no-cache-dir -d downloads yfinance';

describe('network hint', () => {
  it('only for failed code in the sandbox without network, when the output shows a network failure', () => {
    const text = 'ERROR: No matching distribution found for yfinance';
    expect(networkHint({ ok: false, sandboxed: true, network: false, text })).toMatch(/--sandbox-network/);
    expect(networkHint({ ok: true, sandboxed: true, network: false, text })).toBeUndefined();
    expect(networkHint({ ok: false, sandboxed: false, network: false, text })).toBeUndefined();
    expect(networkHint({ ok: false, sandboxed: true, network: true, text })).toBeUndefined();
    expect(networkHint({ ok: false, sandboxed: true, network: false, text: 'ZeroDivisionError: division by zero' })).toBeUndefined();
    for (const t of [
      'socket.gaierror: [Errno -3] Temporary failure in name resolution',
      'Error: getaddrinfo ENOTFOUND pypi.org',
      'curl: (6) Could not resolve host: example.com',
      'ConnectionRefusedError: [Errno 111] Connection refused',
    ])
      expect(networkHint({ ok: false, sandboxed: true, network: false, text: t }), t).toMatch(/--sandbox-network/);
  });
});

const support = sandboxSupport();
describe.skipIf(!support.ok)(`pip in the default sandbox${support.ok ? '' : ` (skipped: ${support.reason})`}`, () => {
  let root: string;
  let server: TestServer;
  beforeAll(async () => {
    requireBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'sop-net-hint-'));
    server = await startOpenAiServer({
      reply: (body) => {
        const turns = body.messages.filter((m) => m.role === 'assistant').length;
        return turns === 0 ? command('run_code', { code: PIP }) : command('finish', { result: 'done' });
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('a Coder cell running pip download: the result names --sandbox-network, in the next prompt and on the terminal', async () => {
    const sop = codeSop('pip');
    (sop.states.work!.commands!.run_code!.settings as Record<string, unknown>).language = 'bash';
    const file = join(root, 'pip.sop.json');
    writeFileSync(file, JSON.stringify(sop));
    const r = await spawnCliAsync(['run', file, '--llm', 'openai', '--base-url', server.url, '--auto-run', '--out', join(root, 'runs')], {
      env: { ...process.env, OPENAI_API_KEY: 'test' },
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const bodies = server.requests.map((q) => q.body as ChatRequestBody);
    const next = bodies.find((b) => shownText(b, 'No matching distribution'));
    expect(next, 'the pip failure reached the next prompt').toBeDefined();
    expect(shownText(next!, 'The sandbox has no network')).toBe(true);
    expect(shownText(next!, '--sandbox-network')).toBe(true);
    expect(r.stdout + r.stderr).toMatch(/The sandbox has no network[^\n]*--sandbox-network/);
  });

  it('the --sandbox-network start warning names the flag', async () => {
    const file = join(root, 'finish.sop.json');
    writeFileSync(file, JSON.stringify(codeSop('finish')));
    const quick = await startOpenAiServer({ reply: () => command('finish', { result: 'done' }) });
    try {
      const r = await spawnCliAsync(
        ['run', file, '--llm', 'openai', '--base-url', quick.url, '--auto-run', '--sandbox-network', '--out', join(root, 'runs2')],
        { env: { ...process.env, OPENAI_API_KEY: 'test' }, timeout: 60_000 },
      );
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/warning: code runs in the sandbox with network \(--sandbox-network\)/);
      expect(r.stderr).not.toContain('options.sandboxNetwork');
    } finally {
      await quick.close();
    }
  });
});
