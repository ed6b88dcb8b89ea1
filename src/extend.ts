// `sop/extend`: what a program needs to extend sop (docs/architecture.md, "Where a new ... goes"):
// plugins and the run context, executors, controller strategies, component kinds, LLM providers,
// embedders, vector indexes, human input, run signals, and the building blocks the benches use.
// The everyday API is the root entry, `sop` (src/index.ts).
export type { SopAgent, SopState, SopComponents, SopController, LlmSettings } from './sop/types.js';
export { cliAllowEntries, type McpAllowEntry } from './mcp/allow.js';
export type { McpApproval } from './mcp/approval.js';
export type { RunListener, RunSettings } from './runtime/events.js';
export { Run, type RunOptions } from './engine/run.js';
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
export type { ChatMessage, ChatOptions, CallMeta, CallPurpose, Usage } from './llm/types.js';
export { LlmError, LlmUnavailableError } from './llm/types.js';
export { createProvider, openaiProvider, type OpenAiProviderOptions, type ProviderChoice } from './api/providers.js';
export type { Embedder } from './memory/embedder.js';
export { createEmbedder } from './memory/create-embedder.js';
export { LocalEmbedder } from './memory/local-embedder.js';
export { AnswersFileInput, HumanInputError, NoHumanInput, NoMoreAnswersError, type HumanQuestion } from './io/human.js';
export { AnswersListInput } from './io/answers-list.js';
export { RunSignal, isRunSignal, type RunSignalDetail, type RunSignalKind } from './errors.js';
export { JournalError } from './journal/reader.js';
export { MemoryEnvironment, type MemoryEnvironmentOptions } from './environment/memory-environment.js';
export { ListEnvironment } from './environment/environment.js';
export { VectorStore } from './memory/vector-store.js';
export { RunFolder, newRunId } from './io/run-folder.js';
export { makeRedactor, type Redactor } from './util/redact.js';
export { limitConcurrency } from './llm/limit.js';
// population states (docs/population.md): worlds of your own, rule policies of your own
export {
  defineWorld,
  registerWorld,
  type World,
  type WorldAgent,
  type StepAction,
  type ActionOutcome,
  type Metrics,
  type Json,
} from './worlds/index.js';
export { registerRulePolicy, type RulePolicyMaker } from './population/rules.js';
export type { RulePolicy, RuleContext } from './worlds/rule.js';
