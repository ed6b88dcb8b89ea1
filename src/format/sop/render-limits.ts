// Limits of one template render. Inline partials that call each other several times, or loops
// nested in loops, multiply the text exponentially: without limits a SOP of a few lines took
// minutes and gigabytes before failing. Every loop iteration and partial call of a render is
// counted, with the text it produced; a render past a limit stops at once with a clear error.
// `sop validate` finds the static causes (partial recursion, expansion, deep nesting) before a
// run: see src/core/prompt/template-check.ts.
import { EngineError } from '../../shared/errors.js';

export const RENDER_LIMITS = {
  /** Characters of one rendered template. */
  maxChars: 16_000_000,
  /** Characters produced by loop bodies and partials, summed over a render (nesting counts again). */
  maxWork: 64_000_000,
  /** Loop iterations plus partial calls in one render. */
  maxSteps: 200_000,
  /** Partials called from partials. */
  maxPartialDepth: 16,
};

export class RenderLimitError extends EngineError {
  constructor(message: string) {
    super(message, 'RENDER_LIMIT');
    this.name = 'RenderLimitError';
  }
}

const fmt = (n: number) => n.toLocaleString('en-US');

class Budget {
  steps = 0;
  work = 0;
  depth = 0;

  step(): void {
    if (++this.steps > RENDER_LIMITS.maxSteps) {
      throw new RenderLimitError(
        `more than ${fmt(RENDER_LIMITS.maxSteps)} loop iterations and partial calls in one render (the limit); nested partials or loops multiply the text`,
      );
    }
  }

  produced(text: unknown): void {
    if (typeof text !== 'string') return;
    this.work += text.length;
    if (this.work > RENDER_LIMITS.maxWork || text.length > RENDER_LIMITS.maxChars) {
      throw new RenderLimitError(
        `the rendered text grows past ${fmt(RENDER_LIMITS.maxChars)} characters (the limit); nested partials or loops multiply the text`,
      );
    }
  }
}

/** The render in progress (renders are synchronous; a nested render gets its own budget). */
let current: Budget | undefined;

/** Run one render under fresh limits; the whole result is checked too. */
export function withinLimits(render: () => string): string {
  const outer = current;
  current = new Budget();
  try {
    let text: string;
    try {
      text = render();
    } catch (err) {
      // V8's own limit on a string (about 512 MB) was reached before ours could see the text
      // (a single `{{x}}` of a huge value, a helper's concatenation): the same message as ours
      if (err instanceof RangeError && /Invalid string length/.test(err.message))
        throw new RenderLimitError(
          `the rendered text grows past the longest string JavaScript can hold, far over the limit of ${fmt(RENDER_LIMITS.maxChars)} characters; nested partials or loops multiply the text`,
        );
      throw err;
    }
    if (text.length > RENDER_LIMITS.maxChars) {
      throw new RenderLimitError(`the rendered text is ${fmt(text.length)} characters, over the limit of ${fmt(RENDER_LIMITS.maxChars)}`);
    }
    return text;
  } finally {
    current = outer;
  }
}

type HelperOptions = { fn?: (ctx: unknown, o?: unknown) => string; [k: string]: unknown };
type HelperFn = (this: unknown, ...args: unknown[]) => unknown;
interface GuardedInstance {
  helpers: Record<string, HelperFn>;
  registerHelper(name: string, fn: HelperFn): void;
  VM: Record<string, unknown> & { invokePartial: (this: unknown, ...args: unknown[]) => unknown };
}

/**
 * Count the loop iterations (`each`, which sections over lists also use) and partial calls of
 * a Handlebars instance's renders. Changes only this instance: its helper and its VM object.
 */
export function guardRenders(instance: object): void {
  const hbs = instance as GuardedInstance;
  const each = hbs.helpers.each!;
  hbs.registerHelper('each', function (this: unknown, ...args: unknown[]) {
    const options = args[args.length - 1] as HelperOptions | undefined;
    const budget = current;
    if (!budget || args.length < 2 || !options || typeof options.fn !== 'function') return each.apply(this, args);
    const body = options.fn;
    const counted = Object.assign((ctx: unknown, o?: unknown) => {
      budget.step();
      const text = body(ctx, o);
      budget.produced(text);
      return text;
    }, body);
    return each.apply(this, [...args.slice(0, -1), { ...options, fn: counted }]);
  });
  const vm = hbs.VM;
  const invokePartial = vm.invokePartial;
  hbs.VM = {
    ...vm,
    invokePartial(this: unknown, ...args: unknown[]) {
      const budget = current;
      if (!budget) return invokePartial.apply(this, args);
      budget.step();
      if (budget.depth >= RENDER_LIMITS.maxPartialDepth) {
        throw new RenderLimitError(
          `partials nested more than ${RENDER_LIMITS.maxPartialDepth} deep (the limit); does a partial call itself?`,
        );
      }
      budget.depth++;
      try {
        const text = invokePartial.apply(this, args);
        budget.produced(text);
        return text;
      } finally {
        budget.depth--;
      }
    },
  };
}
