// A controller strategy: how a state picks its next speaker among its roles (a state with one
// role needs no choice). A new type is one file here, its line in ./index.ts, and its name in
// the controller "type" enum of schemas/sop.schema.json.
import type { Message } from '../../environment/message.js';
import type { CallMeta, ChatMessage } from '../../llm/types.js';
import type { ResolvedState } from '../../../format/sop/resolved.js';
import type { LlmSettings } from '../../../format/sop/types.js';
import type { StateRuntime } from '../controller.js';
import type { Rng } from '../rng.js';
import type { Semantics } from '../semantics.js';

/** What a strategy (and the judge) may use: the run's seeded random numbers, its LLM and prompts. */
export interface ControllerContext {
  rng: Rng;
  /** The run's semantics flags (src/core/runtime/semantics.ts). */
  semantics: Semantics;
  turn: number;
  /** The state's recent messages and the earlier ones most similar to the last (what controllers see). */
  history(state: ResolvedState): Promise<{ history: Message[]; relevant: Message[] }>;
  /** The last message of the run, if any. */
  last(): Message | undefined;
  /** Template context shared by controller prompts: inputs, SOP facts, state, environment prompt. */
  promptContext(state: ResolvedState): Record<string, unknown>;
  render(template: 'speaker_system' | 'speaker_user' | 'judge_system' | 'judge_user', context: object): string;
  /** The LLM settings of the state's controller. */
  llm(state: ResolvedState): LlmSettings;
  call(messages: ChatMessage[], settings: LlmSettings, meta: CallMeta): Promise<string>;
}

export interface SpeakerPick {
  role: string;
  /** Recorded in the speaker_chosen event. */
  how: 'order' | 'random' | 'rule' | 'rule_fallback';
  /** Told to the run's listeners as a warning. */
  warning?: string;
}

export interface ControllerStrategy {
  /** The controller "type" in the SOP. */
  type: string;
  pick(state: ResolvedState, rt: StateRuntime, ctx: ControllerContext): SpeakerPick | Promise<SpeakerPick>;
}
