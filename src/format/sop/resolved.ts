// A SOP with its defaults applied and its cross references indexed, ready for the run loop.
import type { LlmSettings, Sop, SopComponents, SopState, SummarySettings } from './types.js';
import { effectiveRoles } from './graph.js';

export const DEFAULTS = {
  model: 'gpt-4o-mini',
  temperature: 0.3,
  maxChatHistory: 10,
  topK: 0,
  maxTurns: 200,
} as const;

/** Summary chunks kept before the oldest are merged (summary.max_chunks, docs/memory.md). */
export const DEFAULT_MAX_CHUNKS = 8;

export interface ResolvedState {
  name: string;
  def: SopState;
  final: boolean;
  roles: string[];
  beginRole: string | undefined;
  /** begin_role was written in the SOP (not defaulted to roles[0]). */
  beginRoleExplicit: boolean;
  roleToAgent: Record<string, string>;
  nextStates: Record<string, string>;
  maxTurns: number | undefined;
  controllerType: NonNullable<NonNullable<SopState['controller']>['type']>;
  maxChatHistory: number;
  summary: SummarySettings & { enabled: boolean; every: number; maxChunks: number };
}

export interface ResolvedSop {
  sop: Sop;
  states: Record<string, ResolvedState>;
  /** agent -> state -> role */
  agentRoles: Record<string, Record<string, string>>;
}

function mergeLlm(...layers: Array<LlmSettings | undefined>): LlmSettings {
  const out: LlmSettings = {};
  // Own keys only, never __proto__/constructor/prototype (a JSON.parse result can hold them as own keys).
  for (const l of layers) {
    if (!l) continue;
    for (const [k, v] of Object.entries(l))
      if (k !== '__proto__' && k !== 'constructor' && k !== 'prototype') (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

export function resolveSop(sop: Sop): ResolvedSop {
  const env = sop.environment ?? {};
  const states: Record<string, ResolvedState> = {};
  for (const [name, def] of Object.entries(sop.states)) {
    const roles = effectiveRoles(def);
    const maxChatHistory = def.max_chat_history ?? env.max_chat_history ?? DEFAULTS.maxChatHistory;
    const summary = { ...env.summary, ...def.summary };
    states[name] = {
      name,
      def,
      final: def.final === true,
      roles,
      beginRole: def.begin_role ?? roles[0],
      beginRoleExplicit: def.begin_role !== undefined,
      roleToAgent: {},
      nextStates: { ...(def.next_states ?? {}) },
      maxTurns: def.controller?.max_turns,
      controllerType: def.controller?.type ?? 'order',
      maxChatHistory,
      summary: {
        ...summary,
        enabled: summary.enabled !== false,
        every: summary.every ?? maxChatHistory,
        maxChunks: summary.max_chunks ?? DEFAULT_MAX_CHUNKS,
      },
    };
  }
  const agentRoles: Record<string, Record<string, string>> = {};
  for (const [agent, def] of Object.entries(sop.agents)) {
    agentRoles[agent] = { ...def.roles };
    for (const [state, role] of Object.entries(def.roles ?? {})) {
      const s = states[state];
      if (s) s.roleToAgent[role] = agent;
    }
  }
  return { sop, states, agentRoles };
}

export function componentsOf(state: ResolvedState, role: string): SopComponents | undefined {
  return state.def.components?.[role];
}

/** LLM settings of an agent's call: SOP < state < agent < role components. */
export function agentLlm(r: ResolvedSop, state: ResolvedState, agent: string, role: string): LlmSettings {
  return mergeLlm(r.sop.llm, state.def.llm, r.sop.agents[agent]?.llm, componentsOf(state, role)?.llm);
}

/** LLM settings of the judge and speaker calls: SOP < state < controller. */
export function controllerLlm(r: ResolvedSop, state: ResolvedState): LlmSettings {
  return mergeLlm(r.sop.llm, state.def.llm, state.def.controller?.llm);
}

/** LLM settings of the summariser: SOP < state < summary. */
export function summaryLlm(r: ResolvedSop, state: ResolvedState): LlmSettings {
  return mergeLlm(r.sop.llm, state.def.llm, state.summary.llm);
}
