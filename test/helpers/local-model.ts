// The local provider's test model (SmolLM2-135M-Instruct Q4_1), fetched by .ci/run into
// .cache/models/ (scripts/fetch-test-model.mjs, checked against test/fixtures/models/smollm2.json).
// A test that needs it skips, with the reason printed, when it or node-llama-cpp is absent.
// The settings keep runs short and steady on a shared machine: one thread (llama.cpp's threads
// wait for each other by spinning, which a busy machine turns into minutes), small replies.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

const REPO = resolve(import.meta.dirname, '..', '..');

export const TEST_MODEL_SPEC = JSON.parse(readFileSync(join(REPO, 'test/fixtures/models/smollm2.json'), 'utf8')) as {
  file: string;
  bytes: number;
  sha256: string;
};

/** Where the model is (SOP_TEST_MODEL, else .cache/models/FILE). */
export const TEST_MODEL = process.env.SOP_TEST_MODEL ?? join(REPO, '.cache', 'models', TEST_MODEL_SPEC.file);

/** Environment of a CLI run on the test model (one thread, short replies). */
export const LOCAL_ENV = { SOP_LOCAL_THREADS: '1', SOP_LOCAL_MAX_TOKENS: '48', SOP_LOCAL_SEQUENCES: '2' };

/** Why the tests of the real model cannot run here, or undefined when they can. */
export function localModelMissing(): string | undefined {
  if (!existsSync(join(REPO, 'node_modules', 'node-llama-cpp', 'package.json')))
    return 'node-llama-cpp (an optional dependency) is not installed';
  if (!existsSync(TEST_MODEL))
    return `the test model ${TEST_MODEL} is absent (bash .ci/run, or node scripts/fetch-test-model.mjs, fetches it)`;
  if (statSync(TEST_MODEL).size !== TEST_MODEL_SPEC.bytes) return `${TEST_MODEL} is not the recorded test model (its size differs)`;
  return undefined;
}

/** The reason, printed once per file, when the model tests skip. */
export function noteSkip(what: string): string | undefined {
  const missing = localModelMissing();
  if (missing) console.warn(`${what}: skipped: ${missing}`);
  return missing;
}
