// Handlebars templates: the engine's prompts live in prompts/*.hbs and may be overridden inline
// by a SOP's "templates". Rendering is plain text (no HTML escaping) in an isolated Handlebars
// instance without prototype access, so templates cannot reach into code.
import { EngineError } from '../../shared/errors.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SopTemplates, TemplateName } from '../../format/sop/types.js';
import { lazyRequire } from '../../shared/util/lazy-require.js';
import { packageRoot } from '../../shared/util/package-root.js';
import { guardRenders, withinLimits } from '../../format/sop/render-limits.js';
import { tailLines } from './tail-lines.js';
import { contextReads } from './template-reads.js';

export const TEMPLATE_NAMES: TemplateName[] = [
  'agent_system',
  'agent_context',
  'agent_message',
  'agent_last',
  'judge_system',
  'judge_user',
  'speaker_system',
  'speaker_user',
  'summary_system',
  'summary_user',
  // actions and executors (src/features/actions, src/features/actions/executors)
  'commands',
  'command_retry',
  'command_failed',
  'code_approval',
  'code_result',
  'human_question',
  'human_result',
  'library_result',
  'subflow_result',
  // population states (src/features/population)
  'population_system',
  'population_observe',
];

const handlebars = lazyRequire<typeof import('handlebars')>('handlebars');
let instance: typeof import('handlebars') | undefined;
/** The isolated Handlebars instance, made at the first template compiled (not by `import 'sop'`). */
function hbs(): typeof import('handlebars') {
  if (instance) return instance;
  const h = handlebars().create();
  h.registerHelper('eq', (a: unknown, b: unknown) => a === b);
  h.registerHelper('inc', (n: unknown) => Number(n) + 1);
  h.registerHelper('join', (list: unknown, sep: unknown) => (Array.isArray(list) ? list.join(typeof sep === 'string' ? sep : ', ') : ''));
  // {{tail memory.logs 40}}: the last lines of a text that keeps growing, so a prompt stays bounded.
  h.registerHelper('tail', (text: unknown, n: unknown) => tailLines(typeof text === 'string' ? text : '', Number(n)));
  // `log` writes to the engine's console: SOP templates have no business there.
  h.unregisterHelper('log');
  // Loops and partials count against the render's limits (src/core/prompt/render-limits.ts).
  guardRenders(h);
  return (instance = h);
}

/** The helpers SOP templates may call (`sop validate` refuses any other). */
export function templateHelpers(): readonly string[] {
  return Object.keys(hbs().helpers).filter((h) => h !== 'helperMissing' && h !== 'blockHelperMissing');
}

let helperSet: ReadonlySet<string> | undefined;
const templateHelperSet = (): ReadonlySet<string> => (helperSet ??= new Set(Object.keys(hbs().helpers)));

export type Render = (context: object) => string;

export class TemplateError extends EngineError {
  constructor(
    message: string,
    readonly where: string,
  ) {
    super(`${where}: ${message}`, 'TEMPLATE');
    this.name = 'TemplateError';
  }
}

const compileCache = new Map<string, Render>();

/** Compile a template (cached by source). Syntax errors name `where`. */
export function compileTemplate(source: string, where: string): Render {
  const cached = compileCache.get(source);
  if (cached) return cached;
  let fn: HandlebarsTemplateDelegate;
  try {
    fn = hbs().compile(source, { noEscape: true, strict: false, knownHelpers: { log: false } });
    // Compile eagerly so syntax errors surface now, not at the first turn.
    withinLimits(() => fn({}));
  } catch (err) {
    throw new TemplateError((err as Error).message.split('\n').slice(0, 4).join(' '), where);
  }
  const render: Render = (ctx) => {
    try {
      return withinLimits(() => fn(ctx, { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false }));
    } catch (err) {
      throw new TemplateError((err as Error).message, where);
    }
  };
  compileCache.set(source, render);
  return render;
}

/** Render a string that may contain {{...}}; plain strings skip Handlebars entirely. */
export function renderText(source: string, context: object, where: string): string {
  if (!source.includes('{{')) return source;
  return compileTemplate(source, where)(context);
}

const readsCache = new Map<string, ReadonlySet<string> | undefined>();
/** What a template reads (cached by source, as compiled templates are). */
function readsOf(source: string): ReadonlySet<string> | undefined {
  if (!readsCache.has(source)) readsCache.set(source, contextReads(source, templateHelperSet()));
  return readsCache.get(source);
}

const fileTemplates = new Map<TemplateName, string>();
function builtinSource(name: TemplateName): string {
  let src = fileTemplates.get(name);
  if (src === undefined) {
    src = readFileSync(join(packageRoot(), 'prompts', `${name}.hbs`), 'utf8');
    fileTemplates.set(name, src);
  }
  return src;
}

/** The templates of one SOP: its inline overrides, else the files in prompts/. */
export class TemplateSet {
  private readonly renders = new Map<TemplateName, Render>();
  private readonly reading = new Map<TemplateName, ReadonlySet<string> | undefined>();
  constructor(private readonly overrides: SopTemplates = {}) {}

  get(name: TemplateName): Render {
    let r = this.renders.get(name);
    if (!r) {
      const inline = this.overrides[name];
      r =
        inline !== undefined ? compileTemplate(inline, `/templates/${name}`) : compileTemplate(builtinSource(name), `prompts/${name}.hbs`);
      this.renders.set(name, r);
    }
    return r;
  }

  /** The names of its context the template reads (./template-reads.ts); undefined: it may read anything. */
  reads(name: TemplateName): ReadonlySet<string> | undefined {
    if (!this.reading.has(name)) this.reading.set(name, readsOf(this.overrides[name] ?? builtinSource(name)));
    return this.reading.get(name);
  }

  render(name: TemplateName, context: object): string {
    return tidy(this.get(name)(context));
  }

  /**
   * Compile the SOP's inline templates now, so a broken override fails before the run starts.
   * The built-in files (checked by the tests) compile when first used: compiling all of them
   * took a quarter of a short run's start-up.
   */
  checkAll(): void {
    for (const name of TEMPLATE_NAMES) if (this.overrides[name] !== undefined) this.get(name);
  }
}

/** Collapse runs of blank lines and trim, so optional template sections leave no gaps. */
export function tidy(text: string): string {
  return text
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
