// One LLM call of a run: secrets redacted, the graph's walk for the mock provider, through the
// run's effects (durable runs reuse a journaled reply), usage counted, an `llm_call` event.
import { callEndpoint } from '../llm/endpoints.js';
import { callCost, modelPrice, type PricingTable } from '../llm/pricing.js';
import {
  estimateUsage,
  stepOver,
  type CallMeta,
  type ChatMessage,
  type ChatOptions,
  type ChatRequest,
  type LlmProvider,
  type Usage,
} from '../llm/types.js';
import { DEFAULTS, type ResolvedSop } from '../../format/sop/resolved.js';
import type { LlmSettings } from '../../format/sop/types.js';
import type { Redactor } from '../../shared/util/redact.js';
import type { Via } from './call-many.js';
import type { LlmProgress } from './llm-progress.js';
import { llmEffectLabel, type Effects, type LlmEffectResult } from './effects.js';
import { addUsage, type RunEvent, type UsageTotals } from './events.js';
import type { RunPosition } from './position.js';
import { walkMeta } from '../llm/walk-meta.js';
import { fmix32, fnv1a } from '../../shared/util/hash.js';

/** What an LLM call needs of the run. */
export interface LlmCallHost {
  /** The run's provider (after every plugin's wrapLlm). */
  readonly llm: LlmProvider;
  /** Force this model for every call. */
  readonly model?: string;
  /** The LLM block whose server is the provider's own (the top-level SOP's); others name another (llm.base_url). */
  readonly serverLlm?: LlmSettings;
  readonly resolved: ResolvedSop;
  /** The run's id (part of every call's prompt_cache_key). */
  readonly runId?: string;
  readonly position: RunPosition;
  readonly seed: number;
  readonly effects: Effects;
  readonly usage: UsageTotals;
  readonly redact: Redactor;
  /** Prices of models (pricing.json and --pricing); without it calls are not priced (the mock). */
  readonly pricing?: PricingTable;
  readonly signal?: AbortSignal;
  /** Progress of calls a model generates in this process (`llm_progress` events). */
  readonly progress?: LlmProgress;
  emit(event: RunEvent): void;
  /** Told every call as counted, a reply reused from the journal included (budgets). */
  counted?(meta: CallMeta, usage: Usage, cost: number | undefined): void;
}

const short = (text: string) => fmix32(fnv1a(text)).toString(36);

/**
 * The `prompt_cache_key` of a call: the run, the state and the role (or the call's purpose: judge,
 * speaker, summary), and the call's shard when it has one (population steps). Calls with the same
 * key and the same first tokens go to the same prompt cache at OpenAI; a key per role keeps each
 * route under the rate at which a route spills over to cold machines. Hashed: short, and no name
 * of the SOP goes to the server.
 */
export function promptCacheKey(runId: string, meta: Pick<CallMeta, 'state' | 'role' | 'purpose' | 'cacheShard'>): string {
  const who = meta.purpose === 'agent' || meta.purpose === 'tool' ? `role:${meta.role ?? ''}` : meta.purpose;
  return `sop-${short(runId)}-${short(`${meta.state}\u0000${who}`)}${meta.cacheShard !== undefined ? `-${meta.cacheShard}` : ''}`;
}

export async function callLlm(
  host: LlmCallHost,
  messages: ChatMessage[],
  settings: LlmSettings,
  meta: CallMeta,
  stream = false,
  /** The call's own effect key within its step (calls made at once); default: the ledger's count. */
  effectKey?: string,
  /**
   * A step's calls (./call-many.ts): sent through a dispatch's queue instead of the provider, or
   * given up on their own signal; `outlivesRun`: the dispatch's calls survive a kill (not journaled as started).
   */
  through?: { via?: Via; signal?: AbortSignal; outlivesRun?: boolean },
): Promise<string> {
  const model = host.model ?? settings.model ?? DEFAULTS.model;
  const started = performance.now();
  const llm = host.llm;
  const onDelta = stream && meta.agent ? (text: string) => host.emit({ type: 'delta', agent: meta.agent!, text }) : undefined;
  messages = messages.map((m) => {
    const content = host.redact(m.content);
    return content === m.content ? m : { ...m, content };
  }); // secrets
  // Where the graph leads (read by the mock provider only): for judges, and agents of command states.
  if (
    meta.state &&
    !meta.walk &&
    (meta.purpose === 'judge' || (meta.purpose === 'agent' && host.resolved.states[meta.state]?.def.commands))
  ) {
    meta = { ...meta, walk: walkMeta(host.resolved, meta.state, host.position.states, host.seed) };
  }
  // Calls made at once carry their effect key: a cassette records and replays them by it.
  const request = (key: string): ChatRequest => ({
    messages,
    model,
    // another server for this block (llm.base_url, llm.api_key_env); --model sends every call to the run's own
    ...(host.model === undefined ? { endpoint: callEndpoint(host.serverLlm ?? host.resolved.sop.llm, settings) } : {}),
    temperature: settings.temperature ?? DEFAULTS.temperature,
    maxTokens: settings.max_tokens,
    stream,
    ...(host.runId !== undefined ? { promptCacheKey: promptCacheKey(host.runId, meta) } : {}),
    ...(settings.cache_breakpoints ? { cacheBreakpoints: true } : {}),
    meta: effectKey !== undefined && key !== '' ? { ...meta, effect: key } : meta,
  });
  // A reply already in the journal (an interrupted turn being redone) is reused (durable effects).
  const {
    value: res,
    key,
    reused,
  } = await host.effects.perform<LlmEffectResult>(
    {
      kind: 'llm',
      label: llmEffectLabel(meta.purpose, meta.state, meta.agent),
      journalsResult: false,
      ...(effectKey !== undefined ? { key: effectKey } : {}),
    },
    (key) => {
      // A paid call is journaled before it is sent: a kill before its reply is journaled leaves
      // it counted as lost by the resume (it was likely paid for).
      if (llm.paid && !through?.outlivesRun) {
        const promptTokens = estimateUsage(messages, '').promptTokens;
        const price = host.pricing
          ? callCost(modelPrice(host.pricing, settings, host.model, model), { promptTokens, completionTokens: 0 })
          : null;
        host.emit({
          type: 'llm_call_started',
          purpose: meta.purpose,
          state: meta.state,
          ...(meta.agent ? { agent: meta.agent } : {}),
          turn: meta.turn,
          model,
          prompt_tokens: promptTokens,
          ...(typeof price === 'number' ? { cost_usd: price } : {}),
          effect: key,
        });
      }
      const send = through?.via ?? ((r: ChatRequest, o: ChatOptions) => llm.chat(r, o));
      const metered = host.progress?.begin(meta);
      const sent = send(request(key), {
        signal: through?.signal ?? host.signal,
        onDelta,
        ...(metered ? { onProgress: metered.onProgress } : {}),
      });
      if (metered) void sent.finally(metered.end).catch(() => {});
      return sent;
    },
  );
  host.progress?.rethrow();
  if (reused) {
    stepOver(llm, request(key), res); // a cassette steps over (or records) the reply the journal held
    onDelta?.(res.content);
  }
  // The call's price: the SOP's llm.pricing for its own model, else the table; unknown models cost undefined (never 0).
  const cost = host.pricing ? callCost(modelPrice(host.pricing, settings, host.model, model), res.usage, res.priceTier) : null;
  addUsage(
    host.usage,
    meta.purpose,
    res.usage,
    host.pricing ? { model, cost: cost ?? undefined } : undefined,
    meta.population ? undefined : meta.agent,
    meta.state,
  );
  host.counted?.(meta, res.usage, cost ?? undefined);
  if (meta.purpose === 'agent') host.usage.agent_prompt_tokens_last = res.usage.promptTokens; // sampled at turn ends
  let promptChars = 0;
  for (const m of messages) promptChars += m.content.length;
  host.emit({ type: 'prompt', purpose: meta.purpose, state: meta.state, agent: meta.agent, turn: meta.turn, messages });
  host.emit({
    type: 'llm_call',
    purpose: meta.purpose,
    state: meta.state,
    agent: meta.agent,
    turn: meta.turn,
    // a model run in this process (free) names its own file: the SOP's model name was not asked
    model: llm.free && res.model ? res.model : model,
    usage: res.usage,
    ...(typeof cost === 'number' ? { cost_usd: cost } : {}),
    ...(res.priceTier ? { price_tier: res.priceTier } : {}),
    ms: Math.round(performance.now() - started),
    prompt_chars: promptChars,
    reply: res.content,
    effect: key,
  });
  return res.content;
}
