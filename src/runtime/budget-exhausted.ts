// A budget (tokens, USD or turns; docs/cost.md) would be overspent by the next LLM call. Thrown by
// the budget plugin (src/cost/budget-plugin.ts) before the call is made; the run loop moves to
// `target` (the budget's on_exhausted state) or stops with status "budget".
export class BudgetExhaustedError extends Error {
  constructor(
    /** Which budget, and how much of it is spent: "--budget-tokens 1500: 1382 of 1500 tokens used, ...". */
    message: string,
    /** The state to move to (on_exhausted); absent: the run stops with status "budget". */
    readonly target?: string,
  ) {
    super(message);
    this.name = 'BudgetExhaustedError';
  }
}
