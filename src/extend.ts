// `sop/extend`: what a program needs to extend sop (docs/architecture.md, "Where a new ... goes"):
// plugins and the run context, executors, controller strategies, component kinds, LLM providers,
// embedders, vector indexes, human input, run signals, and the building blocks the benches use.
// The everyday API is the root entry, `sop` (src/index.ts).
export type { SopAgent, SopState, SopComponents, SopController, LlmSettings } from './format/sop/types.js';
export { cliAllowEntries, type McpAllowEntry } from './features/mcp/allow.js';
export type { McpApproval } from './features/mcp/approval.js';
export type { RunListener, RunSettings } from './core/runtime/events.js';
export { Run, type RunOptions } from './api/engine/run-with-features.js';
export type { RunPlugin, PluginFactory, TurnStep, TurnOutput, Transition } from './core/runtime/hooks.js';
export { definePlugin } from './core/runtime/hooks.js';
export type { DefinedPlugin } from './core/runtime/hooks.js';
export type { PluginOptionSpec, PluginOptionValues } from './core/runtime/plugin-options.js';
export type { RunContext } from './core/runtime/context.js';
export type { Executor, ExecContext, ExecResult, ArgSpec, ArgSpecs, ExecutorDurability } from './core/commands/executor.js';
export { ExecutorInputError } from './core/commands/executor.js';
export type { CommandSpec, ExecutorTable } from './core/commands/commands.js';
export type { ControllerStrategy, ControllerContext, SpeakerPick } from './core/runtime/controllers/index.js';
export type { ComponentKind, ComponentRuntime } from './core/components/registry.js';
export type { VectorIndex, VectorIndexFactory } from './core/memory/vector-index.js';
export type { EnvironmentMemory, EnvironmentView } from './core/environment/environment.js';
export type { Message, MessageKind } from './core/environment/message.js';
export type { ChatMessage, ChatOptions, CallMeta, CallPurpose, Usage } from './core/llm/types.js';
export { LlmError, LlmUnavailableError } from './core/llm/types.js';
export { createProvider, openaiProvider, type OpenAiProviderOptions, type ProviderChoice } from './api/providers.js';
export type { Embedder } from './core/memory/embedder.js';
export { createEmbedder } from './core/memory/create-embedder.js';
export { LocalEmbedder } from './core/memory/local-embedder.js';
export { AnswersFileInput, HumanInputError, NoHumanInput, NoMoreAnswersError, type HumanQuestion } from './core/io/human.js';
export { AnswersListInput } from './core/io/answers-list.js';
export { RunSignal, isRunSignal, type RunSignalDetail, type RunSignalKind } from './shared/errors.js';
export { JournalError } from './features/journal/reader.js';
export { MemoryEnvironment, type MemoryEnvironmentOptions } from './core/environment/memory-environment.js';
export { ListEnvironment } from './core/environment/environment.js';
export { VectorStore } from './core/memory/vector-store.js';
export { RunFolder, newRunId } from './features/journal/run-folder.js';
export { makeRedactor, type Redactor } from './shared/util/redact.js';
export { limitConcurrency } from './core/llm/limit.js';
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
} from './features/population/worlds/index.js';
export { registerRulePolicy, type RulePolicyMaker } from './features/population/rules.js';
export { registerMetric, type MetricFunction } from './features/population/metrics.js';
export { loadPlugins, type PluginApproval, type PluginAllowEntry, PluginError } from './api/plugins.js';
export type { RulePolicy, RuleContext } from './features/population/worlds/rule.js';
