// The public API of sop: what the CLI, the bench and programs use (docs/api.md).
//
//   import { loadSop, runSop } from 'sop';
//   const run = runSop(loadSop('examples/debate/debate.sop.json'), { llm: 'replay:examples/debate/debate.cassette.json' });
//   for await (const e of run) if (e.type === 'message') console.log(e.message.sender, e.message.content);
//   console.log((await run.result).status);

// SOPs
export { defineSop, loadSop, validateSop, type Validation } from './api/load.js';
export type { Sop, SopAgent, SopState, SopComponents, SopController, LlmSettings } from './sop/types.js';
export { SopError, formatDiagnostic, type Diagnostic } from './sop/diagnostics.js';

// Runs
export { forkRun, resumeRun, runSop, type LlmChoice, type RunSopOptions } from './api/run.js';
export type { RunHandle } from './api/handle.js';
export { cliAllowEntries, type McpAllowEntry } from './mcp/allow.js';
export type { McpApproval } from './mcp/approval.js';
export type { RunEvent, RunListener, RunSettings, UsageTotals } from './runtime/events.js';
export type { RunResult, RunStatus } from './runtime/run.js';
export { Run, type RunOptions } from './engine/run.js';

// Extension points
export type { RunPlugin, PluginFactory, TurnStep, TurnOutput, Transition } from './runtime/hooks.js';
export { definePlugin } from './runtime/hooks.js';
export type { RunContext } from './runtime/context.js';
export type { Executor, ExecContext, ExecResult, ArgSpec, ArgSpecs, ExecutorDurability } from './executors/types.js';
export { ExecutorInputError } from './executors/types.js';
export type { ControllerStrategy, ControllerContext, SpeakerPick } from './runtime/controllers/index.js';
export type { ComponentKind, ComponentRuntime } from './components/registry.js';
export type { VectorIndex, VectorIndexFactory } from './memory/vector-index.js';
export type { EnvironmentMemory, EnvironmentView } from './environment/environment.js';
export type { Message, MessageKind } from './environment/message.js';

// LLM providers
export type { LlmProvider, ChatMessage, ChatRequest, ChatResponse, ChatOptions, CallMeta, CallPurpose, Usage } from './llm/types.js';
export { LlmError, LlmUnavailableError } from './llm/types.js';
export {
  MockProvider,
  RecordingProvider,
  ReplayProvider,
  createProvider,
  openaiProvider,
  type OpenAiProviderOptions,
  type ProviderChoice,
} from './api/providers.js';

// Embedders and human input
export type { Embedder } from './memory/embedder.js';
export { createEmbedder } from './memory/create-embedder.js';
export { LocalEmbedder } from './memory/local-embedder.js';
export { AnswersFileInput, HumanInputError, NoHumanInput, NoMoreAnswersError, type HumanInput, type HumanQuestion } from './io/human.js';
export { AnswersListInput } from './io/answers-list.js';

// Errors: every error sop throws extends EngineError and carries a `code`; control flow is a RunSignal.
export { EngineError, RunSignal, isRunSignal, type ErrorCode, type RunSignalDetail, type RunSignalKind } from './errors.js';
export { JournalError } from './journal/reader.js';

// Building blocks (the benches and embedders of your own use them)
export { MemoryEnvironment, type MemoryEnvironmentOptions } from './environment/memory-environment.js';
export { ListEnvironment } from './environment/environment.js';
export { VectorStore } from './memory/vector-store.js';
export { RunFolder, newRunId } from './io/run-folder.js';
export { makeRedactor, type Redactor } from './util/redact.js';
export { limitConcurrency } from './llm/limit.js';
