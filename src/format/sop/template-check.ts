// Static check of one Handlebars template, without rendering it: syntax, helpers, partials
// (defined, not recursive, not multiplying), nesting, and the variables it reads against those
// the engine gives it (src/core/prompt/template-context.ts). Walks the AST of Handlebars.parse with
// the scopes Handlebars uses: `each` and `with` change the context (`../` goes back one),
// `if` and `unless` do not, block params (`as |item|`) are local names, `@root` is the top.
import { lazyRequire } from '../../shared/util/lazy-require.js';
import { RENDER_LIMITS } from './render-limits.js';
import { CHECKED_HELPERS as TEMPLATE_HELPERS } from './template-helpers.js';

// Handlebars' parser and compiler alone: the very functions of Handlebars.parse and
// Handlebars.Compiler, without the runtime, the JavaScript generator and source maps the package
// loads with them (half its load time, which `sop validate` would spend for nothing); required at
// the first template checked.
const parser = lazyRequire<{ parse(source: string): unknown }>('handlebars/dist/cjs/handlebars/compiler/base.js');
const compiler = lazyRequire<{ Compiler: HandlebarsCompiler }>('handlebars/dist/cjs/handlebars/compiler/compiler.js');

/** What a template may read at its top level. */
export interface TemplateScope {
  /** Names of the top-level context; undefined: anything (not checked). */
  roots?: ReadonlySet<string>;
  /** Inputs the SOP declares: checks {{inputs.NAME}} and the {{goal}} shorthand. */
  inputs?: ReadonlySet<string>;
  /** Memory files of the SOP: checks {{memory.NAME}}. */
  memory?: ReadonlySet<string>;
  /** Why a name is missing, when the engine gives it only to some SOPs or templates. */
  why?: ReadonlyMap<string, string>;
  /** Filled with the inputs the template reads (`{{inputs.NAME}}`, `{{goal}}`). */
  reads?: Set<string>;
}

export interface TemplateProblem {
  message: string;
  /** Line and column in the template text (1-based), when known. */
  line?: number;
  column?: number;
}

/** Loops (`each`, `with`) nested deeper than this multiply the text by data sizes: refused. */
export const MAX_LOOP_NESTING = 4;
/** Blocks nested deeper than this are refused. */
export const MAX_BLOCK_NESTING = 32;
/** Partial calls one render may expand into, counted statically over the inline partials. */
export const MAX_PARTIAL_EXPANSION = 1_000;

// --- a loose view of the Handlebars AST (hbs.AST), enough for the walk ---
interface Loc {
  start: { line: number; column: number };
}
interface Node {
  type: string;
  loc?: Loc;
}
interface PathExpr extends Node {
  type: 'PathExpression';
  data: boolean;
  depth: number;
  parts: string[];
  original: string;
}
interface SubExpr extends Node {
  type: 'SubExpression';
  path: PathExpr;
  params: Expr[];
  hash?: Hash;
}
type Expr = PathExpr | SubExpr | (Node & { original?: unknown });
interface Hash {
  pairs: Array<{ key: string; value: Expr }>;
}
interface Program extends Node {
  body: Node[];
  blockParams?: string[];
}
interface Mustache extends Node {
  path: Expr;
  params: Expr[];
  hash?: Hash;
}
interface Block extends Mustache {
  program?: Program;
  inverse?: Program;
}
interface Partial extends Node {
  name: Expr;
  params: Expr[];
  hash?: Hash;
  program?: Program;
}

interface Frame {
  /** 'root': the template's context; 'unknown': an item or value whose fields are not known. */
  kind: 'root' | 'unknown';
  locals: ReadonlySet<string>;
}

const BLOCKS = new Set(['if', 'unless', 'each', 'with']);
const ARITY: Record<string, [number, number]> = {
  if: [1, 1],
  unless: [1, 1],
  each: [1, 1],
  with: [1, 1],
  lookup: [2, 2],
  eq: [2, 2],
  tail: [2, 2],
  inc: [1, 1],
  join: [1, 2],
};

function oneLine(message: string): string {
  return message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^-*\^$/.test(l))
    .slice(0, 4)
    .join(' ');
}

function isPath(e: Expr | undefined): e is PathExpr {
  return e?.type === 'PathExpression';
}

/** `this.x`, `./x`: never a helper, always the current context. */
function scoped(p: PathExpr): boolean {
  return /^\.|^this\b/.test(p.original);
}

class Checker {
  readonly problems: TemplateProblem[] = [];
  private readonly seen = new Set<string>();
  /** Inline partials: name -> body. */
  readonly partials = new Map<string, Program>();
  /** Partial calls found in each inline partial's body ('' = the template outside partials). */
  readonly calls = new Map<string, string[]>();
  private loops = 0;
  private blocks = 0;

  constructor(private readonly scope: TemplateScope) {}

  problem(message: string, node?: Node): void {
    const key = message;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    const at = node?.loc?.start;
    this.problems.push(at ? { message, line: at.line, column: at.column + 1 } : { message });
  }

  private available(): string {
    const roots = [...(this.scope.roots ?? [])];
    return roots.length ? roots.join(', ') : 'nothing';
  }

  /** A variable read from the top-level context: name, then what follows it. */
  private rootRead(parts: string[], node: Node, shown: string): void {
    const [name, field] = parts;
    if (name === undefined) return;
    const roots = this.scope.roots;
    if (roots && !roots.has(name)) {
      const why = this.scope.why?.get(name);
      this.problem(`{{${shown}}}: ${why ?? `"${name}" is not a variable of this template (it has: ${this.available()})`}`, node);
      return;
    }
    if (name === 'goal') this.scope.reads?.add('goal');
    if (name === 'inputs' && field !== undefined) this.scope.reads?.add(field);
    const inputs = this.scope.inputs;
    if (inputs) {
      if (name === 'goal' && !inputs.has('goal'))
        this.problem(
          `{{${shown}}} reads the input "goal", which this SOP does not declare in "inputs"${inputs.size ? ` (declared: ${[...inputs].join(', ')})` : ''}`,
          node,
        );
      if (name === 'inputs' && field !== undefined && !inputs.has(field)) {
        this.problem(
          `{{${shown}}}: input "${field}" is not declared in "inputs"${inputs.size ? ` (declared: ${[...inputs].join(', ')})` : ' (this SOP declares none)'}`,
          node,
        );
      }
    }
    const memory = this.scope.memory;
    if (memory && name === 'memory' && field !== undefined && !memory.has(field)) {
      this.problem(`{{${shown}}}: memory file "${field}" is not declared in "memory" (declared: ${[...memory].join(', ')})`, node);
    }
  }

  /** A path read as a value (not called as a helper). */
  private read(p: PathExpr, frames: Frame[]): void {
    if (p.data) {
      if (p.parts[0] === 'root') this.rootRead(p.parts.slice(1), p, p.original);
      return;
    }
    const first = p.parts[0];
    if (p.depth === 0 && !scoped(p) && first !== undefined && frames.some((f) => f.locals.has(first))) return; // a block param
    const index = frames.length - 1 - p.depth;
    if (index < 0) {
      this.problem(
        `{{${p.original}}} goes above the top of the template (${p.depth} "../" but only ${frames.length - 1} enclosing loop${frames.length === 2 ? '' : 's'})`,
        p,
      );
      return;
    }
    if (frames[index]!.kind === 'root') this.rootRead(p.parts, p, p.original);
  }

  private expr(e: Expr | undefined, frames: Frame[]): void {
    if (!e) return;
    if (isPath(e)) this.read(e, frames);
    else if (e.type === 'SubExpression') this.call(e as SubExpr, frames, 'sub');
  }

  private args(node: { params: Expr[]; hash?: Hash }, frames: Frame[]): void {
    for (const p of node.params) this.expr(p, frames);
    for (const pair of node.hash?.pairs ?? []) this.expr(pair.value, frames);
  }

  /** A helper call: known helper, right number of arguments. */
  private helper(name: string, node: { params: Expr[] } & Node, how: 'block' | 'inline' | 'sub'): void {
    if (name === 'log') {
      this.problem(`{{log}}: the log helper is disabled in SOP templates (it wrote to the engine's console)`, node);
      return;
    }
    if (!TEMPLATE_HELPERS.includes(name)) {
      this.problem(`unknown helper "${name}" (helpers: ${TEMPLATE_HELPERS.join(', ')}); only helpers take arguments`, node);
      return;
    }
    if (BLOCKS.has(name) && how !== 'block') this.problem(`"${name}" works only as a block: {{#${name} ...}}...{{/${name}}}`, node);
    if (!BLOCKS.has(name) && how === 'block')
      this.problem(`"${name}" is not a block helper; use it as {{${name} ...}} or inside (...)`, node);
    const [min, max] = ARITY[name] ?? [0, Infinity];
    const n = node.params.length;
    if (n < min || n > max)
      this.problem(
        `${how === 'block' ? '#' : ''}${name} takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, got ${n}`,
        node,
      );
  }

  private call(node: Mustache | SubExpr, frames: Frame[], how: 'inline' | 'sub'): void {
    const path = node.path;
    if (isPath(path) && !path.data && path.depth === 0 && !scoped(path) && path.parts.length === 1) this.helper(path.parts[0]!, node, how);
    else if (isPath(path)) this.problem(`{{${path.original} ...}}: only helpers take arguments`, node);
    this.args(node, frames);
  }

  private mustache(m: Mustache, frames: Frame[]): void {
    const path = m.path;
    const hasArgs = m.params.length > 0 || (m.hash?.pairs.length ?? 0) > 0;
    if (hasArgs) return this.call(m, frames, 'inline');
    if (!isPath(path)) return;
    const simple = !path.data && path.depth === 0 && !scoped(path) && path.parts.length === 1;
    if (simple && TEMPLATE_HELPERS.includes(path.parts[0]!)) return this.helper(path.parts[0]!, m, 'inline');
    this.read(path, frames);
  }

  private block(b: Block, frames: Frame[], owner: string): void {
    const path = b.path;
    const name = isPath(path) && !path.data && path.depth === 0 && !scoped(path) && path.parts.length === 1 ? path.parts[0]! : undefined;
    const hasArgs = b.params.length > 0 || (b.hash?.pairs.length ?? 0) > 0;
    let inner: Frame[] = frames;
    let loop = false;
    if (name !== undefined && (hasArgs || TEMPLATE_HELPERS.includes(name) || name === 'log')) {
      this.helper(name, b, 'block');
      this.args(b, frames);
      if (name === 'each' || name === 'with') {
        inner = [...frames, { kind: 'unknown', locals: new Set(b.program?.blockParams ?? []) }];
        loop = true;
      }
    } else if (isPath(path)) {
      if (hasArgs) this.problem(`{{#${path.original} ...}}: only helpers take arguments`, b);
      // A section ({{#list}}...{{/list}}): a value, looped over or entered.
      this.read(path, frames);
      inner = [...frames, { kind: 'unknown', locals: new Set(b.program?.blockParams ?? []) }];
      loop = true;
    }
    this.blocks++;
    if (loop) this.loops++;
    if (this.blocks > MAX_BLOCK_NESTING) this.problem(`blocks nested more than ${MAX_BLOCK_NESTING} deep`, b);
    else if (this.loops > MAX_LOOP_NESTING)
      this.problem(`loops nested more than ${MAX_LOOP_NESTING} deep: each level multiplies the text`, b);
    if (b.program) this.program(b.program, inner, owner);
    if (loop) this.loops--;
    if (b.inverse) this.program(b.inverse, frames, owner);
    this.blocks--;
  }

  private partialCall(p: Partial, frames: Frame[], owner: string): void {
    const name = p.name;
    if (!isPath(name)) {
      this.problem('a partial named by an expression ({{> (...)}}) is not supported in SOP templates', p);
    } else if (name.data) {
      if (name.original !== '@partial-block') this.problem(`{{> ${name.original}}}: unknown partial`, p);
    } else {
      (this.calls.get(owner) ?? this.calls.set(owner, []).get(owner)!).push(name.original);
      if (p.type === 'PartialStatement') this.pendingPartials.push({ name: name.original, node: p });
    }
    this.args(p, frames);
    if (p.type === 'PartialBlockStatement' && p.program) this.program(p.program, frames, owner);
  }

  readonly pendingPartials: Array<{ name: string; node: Node }> = [];

  private decorator(d: Block, frames: Frame[]): void {
    const path = d.path;
    const name = isPath(path) ? path.original : '?';
    if (d.type === 'Decorator' || name !== 'inline') {
      this.problem(`{{*${name}}}: decorators are not supported in SOP templates (only {{#*inline "name"}}...{{/inline}})`, d);
      return;
    }
    const id = d.params[0];
    if (d.params.length !== 1 || id?.type !== 'StringLiteral') {
      this.problem('{{#*inline}} needs one name in quotes: {{#*inline "name"}}...{{/inline}}', d);
      return;
    }
    const partial = String((id as { value?: unknown }).value);
    this.partials.set(partial, d.program!);
    // The body runs in the context of whoever calls it: its variables are not checked here.
    if (d.program) this.program(d.program, [...frames, { kind: 'unknown', locals: new Set() }], partial);
  }

  program(p: Program, frames: Frame[], owner: string): void {
    for (const node of p.body) {
      switch (node.type) {
        case 'MustacheStatement':
          this.mustache(node as Mustache, frames);
          break;
        case 'BlockStatement':
          this.block(node as Block, frames, owner);
          break;
        case 'PartialStatement':
        case 'PartialBlockStatement':
          this.partialCall(node as Partial, frames, owner);
          break;
        case 'DecoratorBlock':
        case 'Decorator':
          this.decorator(node as Block, frames);
          break;
        default:
          break; // content, comments
      }
    }
  }

  /** Partials: defined, not recursive, not nested or multiplied past the limits. */
  partialGraph(): void {
    for (const { name, node } of this.pendingPartials) {
      if (!this.partials.has(name))
        this.problem(
          `{{> ${name}}}: partial "${name}" is not defined; define it in the same template with {{#*inline "${name}"}}...{{/inline}}`,
          node,
        );
    }
    const expansion = new Map<string, number>();
    const depth = new Map<string, number>();
    const visiting: string[] = [];
    const visit = (name: string): [number, number] => {
      if (expansion.has(name)) return [expansion.get(name)!, depth.get(name)!];
      if (visiting.includes(name)) {
        const cycle = [...visiting.slice(visiting.indexOf(name)), name];
        this.problem(`partial "${name}" calls itself (${cycle.join(' -> ')}): the render would never end`);
        return [Infinity, Infinity];
      }
      visiting.push(name);
      let total = 0;
      let deepest = 0;
      for (const callee of this.calls.get(name) ?? []) {
        if (!this.partials.has(callee)) continue;
        const [n, d] = visit(callee);
        total += 1 + n;
        deepest = Math.max(deepest, 1 + d);
      }
      visiting.pop();
      expansion.set(name, total);
      depth.set(name, deepest);
      return [total, deepest];
    };
    for (const name of this.partials.keys()) visit(name);
    // What the template itself calls (outside partial definitions).
    let total = 0;
    let deepest = 0;
    for (const callee of this.calls.get('') ?? []) {
      if (!this.partials.has(callee)) continue;
      total += 1 + expansion.get(callee)!;
      deepest = Math.max(deepest, 1 + depth.get(callee)!);
    }
    if (Number.isFinite(deepest) && deepest > RENDER_LIMITS.maxPartialDepth) {
      this.problem(`partials nested ${deepest} deep (at most ${RENDER_LIMITS.maxPartialDepth})`);
    } else if (Number.isFinite(total) && total > MAX_PARTIAL_EXPANSION) {
      this.problem(
        `the partials expand into ${total > 1e15 ? 'more than 10^15' : total.toLocaleString('en-US')} partial calls (at most ${MAX_PARTIAL_EXPANSION.toLocaleString('en-US')}): partials calling partials several times multiply the text`,
      );
    }
  }
}

/** Problems of one template (empty when it is fine). */
export function checkTemplate(source: string, scope: TemplateScope = {}): TemplateProblem[] {
  let ast: Program;
  try {
    ast = parser().parse(source) as Program;
  } catch (err) {
    if (err instanceof RangeError) return [{ message: 'the template is nested too deeply to read' }];
    const message = oneLine((err as Error).message);
    const open = /got 'EOF'/.test(message) && /OPEN_ENDBLOCK/.test(message) ? unclosedBlock(source) : undefined;
    return [{ message: open ? `{{#${open}}} is not closed: add {{/${open}}} (${message})` : message }];
  }
  const checker = new Checker(scope);
  try {
    checker.program(ast, [{ kind: 'root', locals: new Set() }], '');
    checker.partialGraph();
  } catch (err) {
    if (err instanceof RangeError) return [{ message: 'the template is nested too deeply to check' }];
    throw err;
  }
  if (checker.problems.length > 0) return checker.problems;
  // What the compiler refuses beyond the grammar. It never runs the template; the verdict is
  // kept per source (sub-flows and repeated texts are checked once). Handlebars.precompile(source)
  // would parse the text again, run this Compiler, then generate JavaScript, a step that refuses
  // nothing more (its only errors are its own consistency checks): the Compiler alone, on the AST
  // already read and with precompile's options, gives the same verdict in a fraction of the time.
  let compiled = compilerVerdicts.get(source);
  if (compiled === undefined) {
    try {
      new (compiler().Compiler)().compile(ast, {
        noEscape: true,
        knownHelpers: { log: false },
        data: true,
      });
      compiled = '';
    } catch (err) {
      compiled = oneLine((err as Error).message);
    }
    if (compilerVerdicts.size >= 2000) compilerVerdicts.clear();
    compilerVerdicts.set(source, compiled);
  }
  return compiled ? [{ message: compiled }] : [];
}

const compilerVerdicts = new Map<string, string>();

/** Handlebars.Compiler (untyped): turns a parsed template into opcodes, refusing what it cannot compile. */
type HandlebarsCompiler = new () => { compile(ast: Program, options: Record<string, unknown>): unknown };

/** The innermost block left open at the end of a template, by a scan of its tags. */
function unclosedBlock(source: string): string | undefined {
  const open: string[] = [];
  for (const m of source.matchAll(/\{\{~?\s*([#^/])\s*[*>]?\s*([^\s}~()]+)/g)) {
    if (m[1] === '/') {
      const i = open.lastIndexOf(m[2]!);
      if (i >= 0) open.splice(i);
    } else {
      open.push(m[2]!);
    }
  }
  return open[open.length - 1];
}

/** One line: the problem and, for templates of several lines, where in the template. */
export function describeProblem(p: TemplateProblem, multiline: boolean): string {
  return multiline && p.line !== undefined ? `${p.message} (template line ${p.line}, column ${p.column})` : p.message;
}
