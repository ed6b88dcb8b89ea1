import { describe, expect, it } from 'vitest';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { MockProvider } from '../src/core/llm/mock.js';

describe('smoke', () => {
  it('runs the debate example to its final state with the mock LLM', async () => {
    const { sop } = loadSopFile('examples/debate/debate.sop.json');
    const result = await new Run({ sop, file: 'debate', llm: new MockProvider() }).run();
    expect(result.status).toBe('finished');
    expect(result.finalState).toBe('end');
  });
});
