// Budgets (docs/cost.md): limits on tokens, USD and turns, for the whole run (the SOP's `budget`,
// --budget-tokens, --budget-usd) and for each visit of a state (a state's `budget`). Before each
// LLM call the call's estimated prompt tokens are checked against what is left, so a run
// overshoots by at most one call. A spent budget moves the run to its `on_exhausted` state once
// (which runs on its own allowance), else stops it with status "budget": a RunSignal the loop
// (src/core/runtime/run-loop.ts) carries out without knowing what budgets are.
// Sub-flows draw on their parent's run budgets: the accounts are shared with the nested run.
import { callCost, type ModelPrice, type PricingTable } from '../../core/llm/pricing.js';
import { estimateUsage, type CallMeta, type ChatMessage } from '../../core/llm/types.js';
import { RunSignal } from '../../shared/errors.js';
import type { RunContext } from '../../core/runtime/context.js';
import type { RunPlugin } from '../../core/runtime/hooks.js';

export interface BudgetLimits {
  tokens?: number;
  usd?: number;
  turns?: number;
  on_exhausted?: string;
}

/** What one budget has spent so far. */
export interface BudgetAccount {
  /** How the budget is named in messages: "--budget-tokens 1500", "the SOP's budget", "state \"x\"'s budget". */
  label: string;
  limits: BudgetLimits;
  tokens: number;
  usd: number;
  turns: number;
  /** The run has moved to on_exhausted: calls in that state are no longer charged against this budget. */
  divertedTo?: string;
}

export interface BudgetOptions {
  /** --budget-tokens */
  tokens?: number;
  /** --budget-usd */
  usd?: number;
  /** A sub-flow: its parent's run budgets, shared (a sub-flow's spending counts against them). */
  inherited?: BudgetAccount[];
  /** Prices for USD budgets (absent: the run is not priced, e.g. the mock). */
  pricing?: PricingTable;
}

const account = (label: string, limits: BudgetLimits): BudgetAccount => ({ label, limits, tokens: 0, usd: 0, turns: 0 });

/** Why an account cannot afford a call of `prompt` tokens and `usd` dollars, or undefined. */
function shortfall(a: BudgetAccount, prompt: number, usd: number | undefined): string | undefined {
  const l = a.limits;
  if (l.turns !== undefined && a.turns >= l.turns) return `${a.turns} of ${l.turns} turns taken`;
  if (l.tokens !== undefined && a.tokens + prompt > l.tokens)
    return `${a.tokens} of ${l.tokens} tokens used, the next call needs about ${prompt}`;
  if (l.usd !== undefined && usd !== undefined && a.usd + usd > l.usd)
    return `$${a.usd.toFixed(4)} of $${l.usd} spent, the next call costs about $${usd.toFixed(4)}`;
  return undefined;
}

/** A spent budget: the run moves to `target` (on_exhausted), else stops with status "budget". */
export function budgetSpent(spent: string, target?: string): RunSignal {
  return target !== undefined
    ? new RunSignal('divert', `budget spent (${spent})`, { target, reason: 'budget', record: { budget: spent } })
    : new RunSignal('stop', `budget spent (${spent})`, { status: 'budget', record: { budget: spent } });
}

export type BudgetPlugin = RunPlugin & {
  /** The run budgets a sub-flow draws on (this run's and those it inherited). */
  runAccounts(): BudgetAccount[];
};

export function budgetPlugin(host: RunContext, o: BudgetOptions): BudgetPlugin {
  const inherited = o.inherited ?? [];
  /** The run's own budgets by kind: the command line's, the SOP's. */
  const mine: { cli?: BudgetAccount; sop?: BudgetAccount } = {};
  if (o.tokens !== undefined || o.usd !== undefined) {
    const label = [o.tokens !== undefined ? `--budget-tokens ${o.tokens}` : '', o.usd !== undefined ? `--budget-usd ${o.usd}` : '']
      .filter(Boolean)
      .join(' ');
    mine.cli = account(label, { tokens: o.tokens, usd: o.usd });
  }
  if (host.sop.budget) mine.sop = account(`the SOP's budget`, host.sop.budget);
  const own = [mine.cli, mine.sop].filter((a): a is BudgetAccount => a !== undefined);
  const stateBudgets = Object.values(host.sop.states).some((s) => s.budget);
  // Nothing to enforce: no hooks, nothing journaled.
  if (inherited.length === 0 && own.length === 0 && !stateBudgets) return { name: 'budget', runAccounts: () => [] };
  /** The current visit's account of each state with a budget. */
  const visits: Record<string, BudgetAccount> = {};
  const seenTurnInState: Record<string, number> = {};
  let unpricedWarned = false;
  const wantsUsd =
    [...inherited, ...own].some((a) => a.limits.usd !== undefined) ||
    Object.values(host.sop.states).some((s) => s.budget?.usd !== undefined);

  const stateAccount = (state: string): BudgetAccount | undefined => {
    const limits = host.sop.states[state]?.budget;
    if (!limits) return undefined;
    // A new visit (its turn counter started again) has a fresh allowance.
    const inState = host.turnInState(state);
    if (visits[state] && inState < (seenTurnInState[state] ?? 0)) delete visits[state];
    seenTurnInState[state] = inState;
    return (visits[state] ??= account(`state "${state}"'s budget`, limits));
  };
  const charged = (state: string): BudgetAccount[] => {
    const list = [...inherited, ...own].filter((a) => a.divertedTo !== state);
    const mine = stateAccount(state);
    if (mine) list.push(mine);
    return list;
  };

  /**
   * A command-line budget given only now (sop resume --budget-tokens) counts what the run spent
   * so far; a checkpoint without budgets (written by a run that had none) is not restored into
   * this plugin, so that is taken from the run's usage at its first call or turn, before any
   * sub-flow can charge the account (zero in a new run).
   */
  let cliSynced = false;
  const syncCli = () => {
    cliSynced = true;
    if (!mine.cli) return;
    mine.cli.tokens = host.usage.prompt_tokens + host.usage.completion_tokens;
    mine.cli.usd = host.usage.cost ?? 0;
    mine.cli.turns = host.turn();
  };

  const plugin: BudgetPlugin = {
    name: 'budget',
    runAccounts: () => [...inherited, ...own],
    beforeCall(messages: ChatMessage[], model: string, meta: CallMeta, price: ModelPrice | undefined) {
      if (!cliSynced) syncCli();
      const accounts = charged(meta.state);
      if (accounts.length === 0) return;
      const prompt = estimateUsage(messages, '').promptTokens;
      const usd = price ? callCost(price, { promptTokens: prompt, completionTokens: 0 }) : undefined;
      if (usd === undefined && wantsUsd && !unpricedWarned) {
        unpricedWarned = true;
        host.emit({
          type: 'warning',
          message: o.pricing
            ? `model ${model} has no price (pricing.json, --pricing): its calls do not count against USD budgets`
            : `this run is not priced (the mock): USD budgets are not checked`,
        });
      }
      for (const a of accounts) {
        const why = shortfall(a, prompt, usd);
        if (!why) continue;
        const isOwn = !inherited.includes(a);
        const target = isOwn && a.divertedTo === undefined ? a.limits.on_exhausted : undefined;
        if (target !== undefined) a.divertedTo = target;
        throw budgetSpent(`${a.label}: ${why}`, target);
      }
    },
    beforeTurn(step) {
      if (!cliSynced) syncCli();
      if (step.begin && visits[step.state.name]) delete visits[step.state.name]; // a new visit
    },
    afterCall(meta, usage, cost) {
      for (const a of charged(meta.state)) {
        a.tokens += usage.promptTokens + usage.completionTokens;
        a.usd += cost ?? 0;
      }
    },
    afterMessage(message) {
      for (const a of charged(message.state)) a.turns++;
    },
    checkpoint: () => {
      const spent = (a: BudgetAccount | undefined) => a && { tokens: a.tokens, usd: a.usd, turns: a.turns, divertedTo: a.divertedTo };
      return { cli: spent(mine.cli), sop: spent(mine.sop), visits };
    },
    restoreCheckpoint(state) {
      type Spent = Pick<BudgetAccount, 'tokens' | 'usd' | 'turns' | 'divertedTo'>;
      const s = state as { cli?: Spent; sop?: Spent; visits?: Record<string, BudgetAccount> };
      if (mine.sop && s.sop) Object.assign(mine.sop, s.sop);
      if (mine.cli && s.cli) {
        Object.assign(mine.cli, s.cli);
        cliSynced = true;
      } else syncCli(); // a budget given only now (sop resume --budget-tokens): what the run spent so far counts
      Object.assign(visits, s.visits ?? {});
    },
  };
  return plugin;
}
