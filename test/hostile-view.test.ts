// Hostile input to `sop view`: requests without or with a wrong token, paths that try to leave
// the run folders (../, encoded, absolute, NUL, symbolic links, raw unnormalised request paths),
// journals carrying markup, damaged journals and SOP documents. The server is the real one on
// 127.0.0.1; the run is the debate example replayed from its cassette.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSop, runSop } from '../src/index.js';
import { findRuns } from '../src/apps/view/runs.js';
import { startViewServer, type ViewServer } from '../src/apps/view/server.js';
import { text } from './helpers/html-text.js';

const tmp = mkdtempSync(join(tmpdir(), 'sop-hostile-view-'));
const out = join(tmp, 'runs');
const RUN = 'debate-run';
const SECRET = 'outside the run folders';
let server: ViewServer;
const counts = { tokens: 0, paths: 0, markup: 0, journals: 0 };

/** GET with a raw, unnormalised path (fetch would resolve "../" before sending). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const u = new URL(server.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The debate's journal with each event passed through `edit`. */
function editedJournal(edit: (e: Record<string, unknown>) => Record<string, unknown>): string {
  return (
    readFileSync(join(out, RUN, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.stringify(edit(JSON.parse(l) as Record<string, unknown>)))
      .join('\n') + '\n'
  );
}

function addRun(name: string, journal: string): void {
  mkdirSync(join(out, name));
  writeFileSync(join(out, name, 'journal.jsonl'), journal);
}

beforeAll(async () => {
  const h = runSop(loadSop('examples/debate/debate.sop.json'), { llm: 'replay:examples/debate/debate.cassette.json', out, runId: RUN });
  for await (const e of h) void e;
  const dir = join(out, RUN);
  mkdirSync(join(dir, 'memory'), { recursive: true });
  writeFileSync(join(dir, 'memory', 'notes.md'), 'Oslo numbers\n');
  writeFileSync(join(tmp, 'secret.txt'), SECRET + '\n');
  symlinkSync(join(tmp, 'secret.txt'), join(dir, 'memory', 'link.md'));
  symlinkSync(tmp, join(dir, 'workspace')); // a whole area linked out
  symlinkSync(tmp, join(out, 'linked-run')); // a run folder that is a link out
  addRun(
    'markup-run',
    editedJournal((e) => {
      if (e.type === 'message') {
        const m = e.message as Record<string, unknown>;
        m.content = '<img src=x onerror=alert(1)><script>alert(2)</script> and <b>bold</b>';
        m.sender = '<svg onload=alert(3)>';
      }
      if (e.type === 'state_entered') e.state = '"><script>alert(4)</script>';
      return e;
    }),
  );
  addRun(
    'bad-document-run',
    editedJournal((e) => (e.type === 'run_started' ? { ...e, document: { states: { a: 7 }, agents: '<script>' } } : e)),
  );
  const lines = readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n');
  addRun('damaged-line-run', [...lines.slice(0, 30), '{"type":"message","message":', ...lines.slice(30)].join('\n'));
  addRun('garbage-run', 'not json at all\n\u0000\u0001\n');
  addRun('torn-run', lines.slice(0, 40).join('\n') + '\n{"type":"mess');
  server = await startViewServer({ runs: () => findRuns(out, false), pollMs: 100 });
});

afterAll(async () => {
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
  console.log(
    `hostile view: ${counts.tokens} requests without the right token refused (403), ${counts.paths} paths out of the run folders refused, ` +
      `${counts.markup} markup injections shown as text, ${counts.journals} damaged journals served without an error`,
  );
});

describe('sop view under hostile input', () => {
  it('refuses every request without the right token', async () => {
    const base = new URL(server.url).origin;
    const t = server.token;
    const wrong = ['', '0'.repeat(t.length), t.slice(0, -1), t + '0', t.toUpperCase(), encodeURIComponent(`${t}\u0000`)];
    for (const path of [
      '/',
      `/run/${RUN}`,
      `/run/${RUN}/events`,
      `/run/${RUN}/file?path=memory/notes.md`,
      '/static/mermaid.min.js',
      '/nope',
    ]) {
      const r = await fetch(base + path);
      expect(r.status, path).toBe(403);
      counts.tokens++;
      for (const w of wrong) {
        const r2 = await fetch(`${base}${path}${path.includes('?') ? '&' : '?'}t=${w}`);
        expect(r2.status, `${path} t=${w}`).toBe(403);
        counts.tokens++;
      }
    }
  });

  it('never serves a path outside the run folders', async () => {
    const base = new URL(server.url).origin;
    const t = server.token;
    expect((await fetch(`${base}/run/${RUN}/file?path=memory/notes.md&t=${t}`)).status).toBe(200);
    const paths = [
      '../secret.txt',
      'memory/../../../secret.txt',
      'memory/../../secret.txt',
      '%2e%2e%2f%2e%2e%2fsecret.txt',
      '%252e%252e%252fsecret.txt',
      '..%5c..%5csecret.txt',
      encodeURIComponent(join(tmp, 'secret.txt')),
      'memory/link.md',
      'workspace/secret.txt',
      'journal.jsonl',
      'memory',
      'memory%00/notes.md',
      '',
    ];
    for (const p of paths) {
      const r = await fetch(`${base}/run/${RUN}/file?path=${p}&t=${t}`);
      expect(r.status, p).toBe(404);
      expect(await r.text(), p).not.toContain(SECRET);
      counts.paths++;
    }
    for (const id of ['..%2F..%2Fsecret.txt', 'linked-run', encodeURIComponent(tmp)]) {
      for (const suffix of ['', '/events', '/file?path=secret.txt']) {
        const r = await fetch(`${base}/run/${id}${suffix}${suffix.includes('?') ? '&' : '?'}t=${t}`);
        expect(r.status, id + suffix).toBe(404);
        expect(await r.text()).not.toContain(SECRET);
        counts.paths++;
      }
    }
    for (const path of [
      `/../secret.txt?t=${t}`,
      `/run/../../secret.txt?t=${t}`,
      `/static/../../secret.txt?t=${t}`,
      `/run/${RUN}/../../../secret.txt?t=${t}`,
      `/run/%2e%2e/%2e%2e/secret.txt?t=${t}`,
      `/run/%2e%2e/file?path=secret.txt&t=${t}`,
    ]) {
      const r = await rawGet(path);
      expect(r.status, path).not.toBe(200);
      expect(r.body, path).not.toContain(SECRET);
      counts.paths++;
    }
    // The run page lists only the real file: not the link, not the linked-out workspace.
    const page = await (await fetch(server.runUrl(RUN))).text();
    expect(page).toContain('memory/notes.md');
    expect(page).not.toContain('link.md');
    expect(page).not.toContain(SECRET);
    expect(await (await fetch(server.url)).text()).not.toContain('linked-run');
  });

  it('shows markup from a journal as text, never as markup', async () => {
    const res = await fetch(server.runUrl('markup-run'));
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html.match(/<article class="msg"/g)).toHaveLength(17);
    for (const bad of ['<img', '<script>alert', '<svg onload', '"><script>', '<b>bold']) {
      expect(html).not.toContain(bad);
      counts.markup++;
    }
    expect(text(html)).toContain('<img src=x onerror=alert(1)>');
    expect(html).toContain('<span class="tag-label">script</span>alert(2)');
    const list = await (await fetch(server.url)).text();
    expect(list).not.toContain('<script>alert');
  });

  it('serves damaged journals and SOP documents as far as they read, without an error', async () => {
    const bad = await (await fetch(server.runUrl('bad-document-run'))).text();
    expect(bad).toContain('no state graph: the journal holds no usable SOP document');
    expect(bad.match(/<article class="msg"/g)).toHaveLength(17);
    counts.journals++;
    const damaged = await fetch(server.runUrl('damaged-line-run'));
    expect(damaged.status).toBe(200);
    expect(text(await damaged.text())).toMatch(/damaged line/);
    counts.journals++;
    const garbage = await fetch(server.runUrl('garbage-run'));
    expect(garbage.status).toBe(200);
    expect(text(await garbage.text())).toContain('damaged');
    counts.journals++;
    const torn = await (await fetch(server.runUrl('torn-run'))).text();
    expect(torn).toContain('id="status">killed<');
    counts.journals++;
    const list = text(await (await fetch(server.url)).text());
    expect(list).toMatch(/garbage-rundamaged\?/);
    for (const id of ['bad-document-run', 'damaged-line-run', 'garbage-run', 'torn-run']) {
      const events = await fetch(`${new URL(server.url).origin}/run/${id}/events?t=${server.token}`);
      expect(events.status).toBe(200);
      await events.body?.cancel();
    }
  });
});
