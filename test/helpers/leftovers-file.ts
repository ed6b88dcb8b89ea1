// A setup file of every test file (vitest.config.ts): tags the processes the file starts
// (test/helpers/processes.ts), and fails the file when one of them is still running once the file
// has ended, naming it (it is killed then, so the run goes on clean).
import { relative } from 'node:path';
import { afterAll, expect } from 'vitest';
import { FILE_TAG, reapLeftovers } from './processes.js';
import { scaled } from './time.js';

const run = process.env.SOP_TEST_RUN_ID ?? String(process.ppid);
const file = relative(process.cwd(), expect.getState().testPath ?? 'unknown');
const tag = `${run}:${file}`;
process.env[FILE_TAG] = tag;

// Registered first, so it runs after the file's own afterAll hooks (vitest runs them as a stack).
afterAll(async () => {
  const left = await reapLeftovers(tag);
  if (left.length > 0)
    throw new Error(
      `${file} left ${left.length} process${left.length === 1 ? '' : 'es'} running after its tests (killed now): ` +
        left.map((p) => `${p.pid} ${p.command}`).join('; '),
    );
}, scaled(60_000));
