// `sop sweep --queue --llm local:PATH` (issue 28): a queued job names a local GGUF model by its
// absolute path; the worker runs it only when the file is inside its --root (symlinks resolved)
// and on this machine, and refuses local:hf: (a worker never downloads a model). The sweep makes a
// relative path absolute and loads nothing itself (the workers have the file). No Redis needed:
// the worker's checks (src/apps/sweep/job-policy.ts) are called as it calls them.
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkJob, checkSopLocalModels, type WorkerPolicy } from '../src/apps/sweep/job-policy.js';
import { signJob } from '../src/shared/util/job-signature.js';
import { checkLlm } from '../src/apps/sweep/preflight.js';
import { sweepRunSettings } from '../src/apps/sweep/run-point.js';

const SECRET = 'queue-secret-0123456789abcdef';
const tmp = realpathSync(mkdtempSync(join(tmpdir(), 'sop-queue-local-')));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const root = join(tmp, 'shared');
const elsewhere = join(tmp, 'elsewhere');
mkdirSync(join(root, 'models'), { recursive: true });
mkdirSync(elsewhere);
const sopFile = join(root, 'debate.sop.json');
writeFileSync(sopFile, '{}');
const model = join(root, 'models', 'tiny.gguf');
writeFileSync(model, 'GGUF');
writeFileSync(join(elsewhere, 'other.gguf'), 'GGUF');
symlinkSync(join(elsewhere, 'other.gguf'), join(root, 'models', 'link.gguf'));

const policy: WorkerPolicy = { roots: [root], autoRun: false, yes: false, baseUrls: [], answers: false, pricing: false, replay: false };

/** A job of the sweep with this llm, signed with the shared secret; its id. */
function job(llm: string): { id: string; data: Record<string, unknown> } {
  const data: Record<string, unknown> = {
    v: 1,
    sweep: '0123456789ab',
    file: sopFile,
    runsDir: join(root, 'runs'),
    point: { key: 'seed-1', seed: 1, inputs: {}, repeat: 1 },
    llm,
  };
  const id = '0123456789ab-seed-1';
  return { id, data: { ...data, sig: signJob(SECRET, id, data) } };
}

const check = (llm: string) => {
  const j = job(llm);
  return () => checkJob(SECRET, j.id, j.data, policy, undefined);
};

describe('a queued job with a local model', () => {
  it('runs a .gguf file the worker has inside its --root', () => {
    expect(check(`local:${model}`)().llm).toBe(`local:${model}`);
  });

  it('is refused for a file outside the root (also through a symlink), a file the worker lacks, a relative path or local:hf:', () => {
    expect(check(`local:${join(elsewhere, 'other.gguf')}`)).toThrow(/^the local model ".*other\.gguf" is outside this worker's --root/);
    expect(check(`local:${join(root, 'models', 'link.gguf')}`)).toThrow(
      /^the local model ".*link\.gguf" \(really ".*other\.gguf"\) is outside/,
    );
    expect(check(`local:${join(root, 'models', 'gone.gguf')}`)).toThrow(
      `the local model "${join(root, 'models', 'gone.gguf')}" is not on this worker; put the file at that path on every worker`,
    );
    expect(check('local:models/tiny.gguf')).toThrow(/^the job is not a valid sop job: \/llm must match pattern/);
    expect(check('local:hf:someone/repo/model.gguf')).toThrow(/^the job is not a valid sop job: \/llm must match pattern/);
  });

  it("a SOP's own local models (llm.provider local, no --llm) are held to the root too, and so is the point's --model", () => {
    const sop = (model: string, inner?: string) => ({
      llm: { provider: 'local', model },
      states: { s: { llm: inner !== undefined ? { model: inner } : {} } },
    });
    const roots = [root];
    expect(() => checkSopLocalModels(sop('models/tiny.gguf'), sopFile, {}, undefined, roots)).not.toThrow();
    expect(() => checkSopLocalModels(sop('hf:someone/repo/m.gguf'), sopFile, {}, undefined, roots)).not.toThrow();
    expect(() => checkSopLocalModels(sop('models/tiny.gguf', '../elsewhere/other.gguf'), sopFile, {}, undefined, roots)).toThrow(
      /^the SOP's local model ".*elsewhere\/other\.gguf" is outside this worker's --root/,
    );
    expect(() => checkSopLocalModels(sop('models/link.gguf'), sopFile, {}, undefined, roots)).toThrow(
      /\(really ".*other\.gguf"\) is outside/,
    );
    expect(() => checkSopLocalModels(sop('models/tiny.gguf'), sopFile, { model: '/etc/passwd' }, undefined, roots)).toThrow(
      /^the SOP's local model "\/etc\/passwd" is outside/,
    );
    // a job's own local:PATH (checked by checkJob) or another provider: not the SOP's models
    expect(() => checkSopLocalModels(sop('/etc/passwd'), sopFile, {}, `local:${model}`, roots)).not.toThrow();
    expect(() => checkSopLocalModels({ llm: { model: '/etc/passwd' } }, sopFile, {}, undefined, roots)).not.toThrow();
  });

  it('sop sweep --queue: the path is made absolute, nothing is loaded here, local:hf: is one line', async () => {
    expect(sweepRunSettings({ llm: 'local:models/tiny.gguf' }).llm).toBe(`local:${resolve('models/tiny.gguf')}`);
    expect(sweepRunSettings({ llm: 'local:hf:someone/repo/model.gguf' }).llm).toBe('local:hf:someone/repo/model.gguf');
    // the sweep's machine need not have the file: the workers do
    await expect(checkLlm(`local:${join(tmp, 'not-here.gguf')}`, {}, undefined, true)).resolves.toBeUndefined();
    await expect(checkLlm('local:hf:someone/repo/model.gguf', {}, undefined, true)).rejects.toThrow(
      '--llm local:hf:someone/repo/model.gguf on a queue: a worker never downloads a model; fetch it once ' +
        '(sop run --llm local:hf:someone/repo/model.gguf) and give --llm local:PATH of the .gguf file, at the same path on every worker',
    );
    // in this process the model is loaded first, so a missing file fails before any run
    await expect(checkLlm(`local:${join(tmp, 'not-here.gguf')}`, {}, undefined, false)).rejects.toThrow(/no model file/);
  });
});
