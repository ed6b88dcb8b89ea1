// The public API of sop: what the CLI, the bench and programs use (docs/api.md). It is kept small:
// loading and validating SOPs, running, resuming and forking runs, their events and results, the
// LLM providers a program picks from, and the errors. Extension points (plugins, executors,
// controllers, providers, embedders, vector indexes) and building blocks are in `sop/extend`
// (src/extend.ts).
//
//   import { loadSop, runSop } from 'sop';
//   const run = runSop(loadSop('examples/debate/debate.sop.json'), { llm: 'replay:examples/debate/debate.cassette.json' });
//   for await (const e of run) if (e.type === 'message') console.log(e.message.sender, e.message.content);
//   console.log((await run.result).status);

export { defineSop, loadSop, validateSop, type Validation } from './api/load-sop.js';
export type { Sop } from './format/sop/types.js';
export { SopError, formatDiagnostic, type Diagnostic } from './format/sop/diagnostics.js';
export { forkRun, resumeRun, runSop, type LlmChoice, type RunSopOptions } from './api/run-sop.js';
export type { RunHandle } from './api/handle.js';
export type { RunEvent, UsageTotals } from './core/runtime/events.js';
export type { RunResult, RunStatus } from './core/runtime/run-loop.js';
export type { LlmProvider, ChatRequest, ChatResponse } from './core/llm/types.js';
export { MockProvider, RecordingProvider, ReplayProvider } from './api/providers.js';
export { type HumanInput } from './core/io/human.js';
export { EngineError, type ErrorCode } from './shared/errors.js';
