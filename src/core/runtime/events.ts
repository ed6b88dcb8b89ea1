// Events of a run: what listeners (terminal, --json, run folder, journal) are told, in order.
import type { Message } from '../environment/message.js';
import type { CallPurpose, ChatMessage, PriceTier, Usage } from '../llm/types.js';
import type { MessagePart } from '../../shared/errors.js';
import type { RunSnapshot } from './position.js';
import type { UsageTotals } from './usage.js';

export { addUsage, emptyUsage, type UsageTotals } from './usage.js';

export type RunEvent =
  | {
      type: 'run_started';
      run_id: string;
      sop: string;
      file: string;
      root: string;
      seed: number;
      inputs: Record<string, string>;
      llm: string;
      time: string;
      /** The SOP document as run (journal: a resume or fork runs exactly this). */
      document?: unknown;
      /** Run options that change behaviour (journal: reused by resume and fork). */
      settings?: RunSettings;
      /** How the command line chose the LLM and human input (journal: defaults for resume). */
      launch?: Record<string, string | number | boolean>;
      /** The run a fork branched from, at which turn, and the LLM of that run (its turns up to there). */
      forked_from?: { run_id: string; dir: string; turn: number; llm?: string };
    }
  | {
      type: 'state_entered';
      state: string;
      from?: string;
      turn: number;
      reason: 'root' | 'judge' | 'max_turns' | 'direct' | 'finish' | 'budget';
    }
  | {
      type: 'speaker_chosen';
      state: string;
      agent: string;
      role: string;
      turn: number;
      how: 'begin' | 'order' | 'random' | 'rule' | 'rule_fallback' | 'single';
    }
  | {
      type: 'llm_call';
      purpose: CallPurpose;
      state: string;
      agent?: string;
      turn: number;
      model: string;
      usage: Usage;
      /** USD of the call, when its model has a price (absent: unknown, or not priced). */
      cost_usd?: number;
      /** The price tier it was charged at, when not the standard one (`batch`: sent in a batch file). */
      price_tier?: PriceTier;
      ms: number;
      prompt_chars: number;
      reply: string;
      /** Effect key (journal: a resumed run reuses this reply instead of asking again). */
      effect?: string;
    }
  /**
   * A call to a paid server about to be sent (journal: written before the request goes out, so a
   * resume after a kill counts a call whose reply was lost: usage `lost`). Not told for cassettes
   * or the mock, nor for a reply reused from the journal.
   */
  | {
      type: 'llm_call_started';
      purpose: CallPurpose;
      state: string;
      agent?: string;
      turn: number;
      model: string;
      /** Estimated prompt tokens (about 4 characters a token). */
      prompt_tokens: number;
      /** USD of those prompt tokens, when the model has a price. */
      cost_usd?: number;
      effect: string;
    }
  /**
   * How far calls a model generates in this process have come (src/core/runtime/llm-progress.ts):
   * told every 5 s while they run, per agent's call or per population step (`population`, its
   * calls together). `tokens` are reply tokens so far, `tokens_per_s` those over the seconds since
   * the first of them.
   */
  | {
      type: 'llm_progress';
      state: string;
      turn: number;
      /** One agent's (or judge's...) call: its purpose and agent. */
      purpose?: CallPurpose;
      agent?: string;
      /** A population step's calls together. */
      population?: true;
      /** Calls begun, answered, and being generated now (reading their prompt or writing their reply). */
      calls: number;
      done: number;
      generating: number;
      prompt_tokens: number;
      tokens: number;
      tokens_per_s: number;
      /** Since the first call began. */
      elapsed_ms: number;
    }
  /** A request to a paid embedder (openai:MODEL): counted in usage (by_purpose.embedding), cost and budgets. */
  | {
      type: 'embedding_call';
      state: string;
      turn: number;
      model: string;
      texts: number;
      usage: Usage;
      /** USD of the request, when its model has a price. */
      cost_usd?: number;
    }
  /**
   * The messages an LLM call was sent (secrets redacted), told just before its `llm_call`. The
   * journal stores it compactly (src/features/journal/prompts.ts); `--json` prints it only with --json-prompts.
   */
  | { type: 'prompt'; purpose: CallPurpose; state: string; agent?: string; turn: number; messages: ChatMessage[] }
  | { type: 'delta'; agent: string; text: string }
  | { type: 'message'; message: Message }
  | { type: 'judge'; state: string; turn: number; key: string; target: string; fallback: boolean }
  | {
      type: 'summary';
      state: string;
      turn: number;
      after_messages: number;
      summary: string;
      /** The agents this summary is for, when audiences keep one per viewer and it is not everyone's. */
      audience?: string[];
    }
  | { type: 'warning'; message: string; /** The message in parts, when it names options of the run. */ parts?: MessagePart[] }
  // --- Durability (src/features/journal): checkpoints at turn boundaries and journaled side effects. ---
  /** Turn boundary: everything needed to continue from here (messages are the `message` events before it). */
  | { type: 'checkpoint'; turn: number; snapshot: RunSnapshot }
  /** A resumed (or forked) run continues from the checkpoint at `from_turn`; later events of the earlier attempt are void. */
  | {
      type: 'resumed';
      mode: 'resume' | 'fork';
      from_turn: number;
      time: string;
      /** The settings that apply from now on, as in run_started (journal: the next resume starts from the last ones recorded). */
      settings?: RunSettings;
      launch?: Record<string, string | number | boolean>;
    }
  /** A side effect (code, human, sub-SOP, file) is about to be performed; see src/features/journal/effects.ts. */
  | { type: 'effect_started'; key: string; kind: string; label: string; turn: number }
  /** An effect marked as started did not take place (its approval was needed and nobody could give it): a resume performs it as new. */
  | { type: 'effect_cancelled'; key: string; kind: string; label: string; turn: number; reason: string }
  /** Its result (JSON); `reused` when a resumed run took it from the journal instead of performing it. */
  | {
      type: 'effect_finished';
      key: string;
      kind: string;
      label: string;
      turn: number;
      result: unknown;
      reused?: boolean;
      llm_cursor?: number;
    }
  /** A run file (memory file, workspace file) written, with its whole new content, so a fork can rebuild it. */
  | { type: 'file_written'; path: string; content: string; turn: number }
  // --- Actions (src/features/actions, src/features/actions/executors): commands, executors, memory files, sub-flows. ---
  /** A reply that is not a valid command; it is sent back to the agent with the error (bounded retries). */
  | { type: 'command_rejected'; state: string; agent: string; turn: number; attempt: number; error: string; reply: string }
  | {
      type: 'executor_called';
      state: string;
      agent: string;
      role: string;
      turn: number;
      command: string;
      executor: string;
      args: Record<string, unknown>;
    }
  | {
      type: 'executor_result';
      state: string;
      agent: string;
      turn: number;
      command: string;
      executor: string;
      ok: boolean;
      result: string;
      summary: string;
      ms: number;
      finish: boolean;
    }
  | { type: 'memory_written'; name: string; op: 'write' | 'append'; path?: string; bytes: number }
  // --- Population states (src/features/population, docs/population.md): many agents act in each step. ---
  /** A population state's visit begins: its agents are loaded and its world is made. */
  | {
      type: 'population_started';
      state: string;
      visit: number;
      agents: number;
      columns: string[];
      world: string;
      seed: number;
      /**
       * The population's data file as an absolute path (absent for a generated population):
       * the agents table of RUN/population.duckdb loads it again from any folder.
       */
      source?: string;
    }
  /** One population step: who acted, what they did (in the order applied), what it did, the metrics after it, survey answers. */
  | {
      type: 'population_step';
      state: string;
      visit: number;
      /** 1-based step of the visit. */
      step: number;
      turn: number;
      /** Simulated clock at the step's start, HH:MM, and minutes since the visit began. */
      clock: string;
      minute: number;
      active: number;
      actions: PopulationAction[];
      /**
       * How many of `actions`, after the injected ones, the world applied (the rest were refused by
       * a judge or invalid): with them, a resume replays the step without its calls.
       */
      applied?: number;
      metrics: Record<string, number | null>;
      surveys?: Array<{ survey: string; agent: string; question: string; answer: string }>;
      /** The step's LLM calls and tokens; cached_tokens when the provider reported some (the step's cached share). */
      usage?: { calls: number; prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
    }
  /**
   * The adaptive limit of LLM calls at once to a server changed (src/core/llm/adaptive-limit.ts,
   * docs/scale.md#adaptive-concurrency): every decrease and slow-start doubling, an additive
   * increase at most once a second.
   */
  | { type: 'concurrency'; endpoint: string; limit: number; previous: number; reason: string; in_flight: number }
  /**
   * A step's calls sent as one batch (--llm-mode batch, docs/population.md#batch-mode): told when it
   * is submitted (status `submitted`; a resumed run that polls it again: `resumed`) and at each
   * change of its status. `id`: the OpenAI batch id, or the vllm output file.
   */
  | {
      type: 'batch';
      state: string;
      visit: number;
      step: number;
      target: 'openai' | 'vllm';
      id: string;
      status: string;
      /** Calls in the batch. */
      calls: number;
      /** Requests done and failed so far, as the server counts them. */
      completed?: number;
      failed?: number;
      /** vllm: the command that answers the batch (the user runs it; sop never does). */
      command?: string;
    }
  /** An event of a sub-flow (sop executor), tagged with its path, e.g. "Coder-1/extend_library-1". */
  | { type: 'subflow'; flow: string; event: RunEvent }
  | {
      type: 'run_finished';
      status: 'finished' | 'max_turns' | 'failed' | 'interrupted' | 'budget';
      turns: number;
      final_state?: string;
      error?: string;
      /** Status "budget": which budget was spent (docs/cost.md). */
      budget?: string;
      usage: UsageTotals;
      time: string;
      /** The result of the SOP (its last finish command), when it has one. */
      result?: string;
    };

/** One applied action of a population step (`injected`: an intervention's, not an agent's choice). */
export interface PopulationAction {
  agent: string;
  name: string;
  args: Record<string, unknown>;
  ok: boolean;
  output: string;
  tier: 'per_agent' | 'archetype' | 'rule' | 'injected' | 'seat';
}

/** Run options recorded in run_started so a resume or fork behaves the same. */
export interface RunSettings {
  max_turns: number;
  model?: string;
  compat?: 'agents-v1';
  name_stripping?: 'leading' | 'agents-v1';
  stream?: boolean;
}

export type RunListener = (event: RunEvent) => void;

/** A `prompt` event, of the run or of a sub-flow (wrapped in `subflow`). */
export function isPromptEvent(e: RunEvent): boolean {
  for (let d = 0; d < 32 && e.type === 'subflow'; d++) e = e.event;
  return e.type === 'prompt';
}
