// Pure decisions of a state's controller: where to go next and who speaks, given the answers
// of the judge and speaker calls. The run loop does the I/O; these functions hold the rules.
import { extractAllTags, extractTag } from '../../shared/util/tags.js';
import type { Rng } from './rng.js';

export type ControllerType = 'order' | 'random' | 'rule';

/** Per-state counters of the run loop (journaled, restored on resume). */
export interface StateRuntime {
  /** Whether the begin turn of the current visit has happened. */
  begun: boolean;
  /** Turns taken in the state (this visit, or all visits in agents-v1 compat mode). */
  chatNums: number;
  /** Rotation index into roles (order controller). */
  index: number;
  currentRole?: string;
  visits: number;
}

export function freshStateRuntime(roles: readonly string[], beginRole: string | undefined): StateRuntime {
  const index = beginRole !== undefined ? Math.max(0, roles.indexOf(beginRole)) : 0;
  return { begun: false, chatNums: 0, index, currentRole: beginRole ?? roles[0], visits: 0 };
}

export type TransitDecision =
  | { kind: 'direct'; key: string } // no judge needed
  | { kind: 'max_turns'; key: string } // max_turns reached: next_states["1"]
  | { kind: 'ask_judge' };

export function transitDecision(nextStates: Record<string, string>, chatNums: number, maxTurns: number | undefined): TransitDecision {
  const keys = Object.keys(nextStates);
  if (keys.length === 1 && keys[0] === '0') return { kind: 'direct', key: '0' };
  if (maxTurns !== undefined && chatNums >= maxTurns && nextStates['1'] !== undefined) return { kind: 'max_turns', key: '1' };
  return { kind: 'ask_judge' };
}

/**
 * The key a judge reply selects: the whole reply if it is all digits; otherwise the digits
 * inside the extract tags (all occurrences joined); anything else means stay ("0").
 */
export function parseJudgeReply(reply: string, extractWord: string): string {
  if (/^[0-9]+$/.test(reply)) return reply;
  const inner = extractAllTags(reply, extractWord);
  return /^[0-9]+$/.test(inner) ? inner : '0';
}

/** Target of a judge key: a key without a transition (including "0" when absent) stays. */
export function targetOf(nextStates: Record<string, string>, key: string, current: string): { target: string; known: boolean } {
  const target = nextStates[key];
  if (target !== undefined) return { target, known: true };
  return { target: nextStates['0'] ?? current, known: key === '0' };
}

/** Next role under the order controller; mutates the runtime's index. */
export function nextInOrder(rt: StateRuntime, roles: readonly string[]): string {
  if (!rt.currentRole) return roles[0]!;
  rt.index = (rt.index + 1) % roles.length;
  return roles[rt.index]!;
}

/** The role a speaker-choice reply names, or a seeded random role when it names none. */
export function parseSpeakerReply(
  reply: string,
  extractWord: string,
  roles: readonly string[],
  rng: Rng,
): { role: string; fallback: boolean } {
  const named = extractTag(reply, extractWord)?.trim() ?? reply.trim();
  if (roles.includes(named)) return { role: named, fallback: false };
  return { role: rng.pick(roles), fallback: true };
}
