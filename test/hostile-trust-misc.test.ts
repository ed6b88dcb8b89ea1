// Hostile trust, the medium and low items of issue 23: code whose escaped child (cleared
// environment, its own session) keeps the output open; concurrent resumes of one run; secrets
// by newer names handed to code; a human player shown what their agent may not see; and the
// low items (disk full, render limits, sub-flow cycles across files, lost replies, edited
// journals, resume --record). Everything runs the real executors or the real `sop` binary;
// only the LLM is replaced (a local OpenAI-compatible server, mock or cassettes).
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { executor as code } from '../src/executors/code.js';
import { CodeSession } from '../src/executors/session/code-session.js';
import { makeRedactor } from '../src/util/redact.js';
import { execContext, tempDir } from './helpers/executor-context.js';

const counts = {
  escaped: 0,
  escapedReaped: 0,
  secretVars: 0,
  secretVarsWithheld: 0,
};

afterAll(() => {
  console.log(
    `hostile trust (misc): ${counts.escapedReaped}/${counts.escaped} escaped children (env -i setsid, output held) reaped at the timeout`,
  );
});

const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

/** A zombie is gone for our purpose (it holds nothing); its state letter is Z. */
function dead(pid: number): boolean {
  if (gone(pid)) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

async function waitDead(pid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (dead(pid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return dead(pid);
}

/**
 * A script whose child clears its environment (so it carries no run tag), leaves the process
 * group (setsid) and keeps the script's stdout open; it waits until the escape has happened.
 */
const escape = (after: string) =>
  [
    'env -i setsid sleep 1000 < /dev/null &',
    'pid=$!',
    'for i in $(seq 1 5000); do [ -e /proc/$pid ] || break; [ "$(cut -d" " -f6 /proc/$pid/stat 2>/dev/null)" = "$pid" ] && break; done',
    'echo "escaped $pid"',
    after,
  ].join('\n');

describe('code whose escaped child keeps stdout open (no sandbox)', () => {
  it.each([
    ['when the script ends', '', 10_000],
    ['at the timeout', 'sleep 1000', 1500],
  ])('returns and the child is reaped %s', async (_label, after, timeoutMs) => {
    const started = Date.now();
    const r = await code.run(
      { language: 'bash', code: escape(after) },
      execContext({ settings: { language: 'bash', timeout_ms: timeoutMs } }),
    );
    const took = Date.now() - started;
    const pid = Number(/escaped (\d+)/.exec(r.result)?.[1]);
    expect(pid, r.result).toBeGreaterThan(0);
    counts.escaped++;
    const reaped = await waitDead(pid, 5_000);
    if (!reaped) process.kill(pid, 'SIGKILL'); // clean up what the test started
    expect(reaped).toBe(true);
    expect(took).toBeLessThan(timeoutMs + 5_000);
    if (after) expect(r.result).toContain('timeout');
    else expect(r.result).toContain('exit code 0');
    counts.escapedReaped++;
  });

  it('a session cell returns at its timeout, and the session starts afresh', async () => {
    const session = new CodeSession({ language: 'python', cwd: tempDir(), sandbox: false });
    const cell = [
      'import shutil, subprocess, time',
      "p = subprocess.Popen([shutil.which('sleep'), '1000'], env={}, start_new_session=True, stdin=subprocess.DEVNULL)",
      "print('escaped', p.pid, flush=True)",
      'time.sleep(1000)',
    ].join('\n');
    try {
      const r = await session.run(cell, { timeoutMs: 1500 });
      const pid = Number(/escaped (\d+)/.exec(r.stdout)?.[1]);
      expect(pid, JSON.stringify(r)).toBeGreaterThan(0);
      counts.escaped++;
      expect(r.timedOut).toBe(true);
      const reaped = await waitDead(pid, 5_000);
      if (!reaped) process.kill(pid, 'SIGKILL');
      expect(reaped).toBe(true);
      counts.escapedReaped++;
      const next = await session.run("print('again')", { timeoutMs: 10_000 });
      expect(next.stdout.trim()).toBe('again');
    } finally {
      session.close();
    }
  });
});

describe('secrets by newer names', () => {
  const canaries: Record<string, string> = {
    MYSQL_PWD: 'mysql-canary-pw-4417',
    PGPASSWORD: 'pg-canary-pw-9021',
    JWT: 'eyJhbGciOiJIUzI1NiJ9.eyJjYW5hcnkiOjF9.c2lnY2FuYXJ5',
    TEAM_WEBHOOK_URL: 'https://hooks.example.test/services/T0/B0/canaryhook77',
    SENTRY_DSN: 'https://canarydsn5512@o1.ingest.example.test/42',
  };
  it('are not in the environment of code, and are redacted wherever they are printed', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, canaries);
    try {
      const r = await code.run({ language: 'bash', code: 'env' }, execContext({ settings: { language: 'bash' } }));
      expect(r.result).toContain('SOP_WORKSPACE=');
      const redact = makeRedactor();
      for (const [name, value] of Object.entries(canaries)) {
        counts.secretVars++;
        // not handed to the code at all
        expect(r.result, name).not.toContain(`${name}=`);
        expect(r.result, name).not.toContain(value);
        // and redacted where anything prints it (code reading its parent's environ, a reply)
        const b64 = Buffer.from(value).toString('base64');
        const shown = redact(`x ${value} ${b64} y`);
        expect(shown, name).toMatch(/^x \[REDACTED\] \[REDACTED\]/);
        expect(shown, name).not.toContain(value);
        expect(shown, name).not.toContain(b64.slice(0, 8));
        counts.secretVarsWithheld++;
      }
    } finally {
      for (const k of Object.keys(canaries)) if (!(k in saved)) delete process.env[k];
    }
  });
});
