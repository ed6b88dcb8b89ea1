// A small safe expression language for priorities (and any rule over an agent's attributes):
// parsed by jsep, evaluated here by walking the tree. No eval, no Function, no prototype access.
//   numbers, strings, true/false/null; + - * / %; < <= > >= == != (=== and !== alike);
//   && || ! and the words and / or / not; a ? b : c; attribute access (`action.args.price`,
//   `tags[0]`); the functions min, max, abs, floor, ceil, round, sqrt, log, exp, pow, and in_list(x, list)
//   (list: an array or a comma-separated text). A caller may allow more functions, given by the
//   scope at evaluation (a rule's `random()`), and methods of scope objects (`neighbours.share('adopted')`).
// Unknown names are an error at evaluation ("unknown name x"), so a typo does not read as 0;
// `sop validate` checks them beforehand against what each expression sees (expressionNames, and
// `uses` of a compiled expression). An expression is at most MAX_EXPRESSION_CHARS long and nests
// at most MAX_EXPRESSION_DEPTH deep, so parsing and evaluating it (both recursive) never exhaust the stack.
import jsep from 'jsep';
import { EngineError } from '../../../shared/errors.js';

jsep.addBinaryOp('or', 1);
jsep.addBinaryOp('and', 2);
jsep.addUnaryOp('not');

export class ExpressionError extends EngineError {
  constructor(message: string) {
    super(message, 'EXPRESSION');
    this.name = 'ExpressionError';
  }
}

type Node = jsep.Expression;
export type Scope = Readonly<Record<string, unknown>>;

const FUNCTIONS: Record<string, (...xs: number[]) => number> = {
  min: Math.min,
  max: Math.max,
  abs: Math.abs,
  floor: Math.floor,
  ceil: Math.ceil,
  round: Math.round,
  sqrt: Math.sqrt,
  log: Math.log,
  exp: Math.exp,
  pow: Math.pow,
};
/** Functions over values of any type (no coercion to numbers). */
const PURE: Record<string, (...xs: unknown[]) => unknown> = {
  in_list: (x, list) => {
    const items = Array.isArray(list) ? list : typeof list === 'string' ? list.split(',').map((s) => s.trim()) : [];
    return items.some((item) => item === x || String(item) === String(x));
  },
};
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
/** The longest expression (characters): a rule over attributes is a line, not a program. */
export const MAX_EXPRESSION_CHARS = 10_000;
/** The deepest nesting of brackets and of the parsed tree (an operator's operand counts one level). */
export const MAX_EXPRESSION_DEPTH = 200;
const BINARY = new Set(['+', '-', '*', '/', '%', '<', '<=', '>', '>=', '==', '!=', '===', '!==', '&&', '||', 'and', 'or']);
const UNARY = new Set(['-', '+', '!', 'not']);

/** What a caller allows beyond the built-in functions. */
export interface ExpressionOptions {
  /** Functions the scope gives at evaluation (e.g. `random`): called as `random()`. */
  functions?: readonly string[];
  /** Objects of the scope whose methods may be called, with the method names (e.g. neighbours: [count, share]). */
  methods?: Readonly<Record<string, readonly string[]>>;
}

const builtIns = () => [...Object.keys(FUNCTIONS), ...Object.keys(PURE)];

/** Checks the tree once, so a bad expression fails when it is compiled, not at the first agent. */
function check(node: Node, opts: ExpressionOptions, out: NameUse): void {
  const rec = (n: Node) => check(n, opts, out);
  switch (node.type) {
    case 'Literal':
    case 'Identifier':
    case 'ThisExpression':
      if (node.type === 'ThisExpression') throw new ExpressionError('"this" is not allowed');
      if (node.type === 'Identifier' && FORBIDDEN.has(node.name as string))
        throw new ExpressionError(`"${String(node.name)}" is not allowed`);
      if (node.type === 'Identifier' && !['true', 'false', 'null'].includes(node.name as string)) out.names.add(node.name as string);
      return;
    case 'BinaryExpression':
      if (!BINARY.has(node.operator as string)) throw new ExpressionError(`operator "${String(node.operator)}" is not supported`);
      rec(node.left as Node);
      rec(node.right as Node);
      return;
    case 'UnaryExpression':
      if (!UNARY.has(node.operator as string)) throw new ExpressionError(`operator "${String(node.operator)}" is not supported`);
      rec(node.argument as Node);
      return;
    case 'ConditionalExpression':
      rec(node.test as Node);
      rec(node.consequent as Node);
      rec(node.alternate as Node);
      return;
    case 'MemberExpression':
      rec(node.object as Node);
      if (node.computed) {
        const key = node.property as Node;
        if (key.type === 'Literal' && FORBIDDEN.has(String(key.value))) throw new ExpressionError(`"${String(key.value)}" is not allowed`);
        rec(key);
      } else {
        if (FORBIDDEN.has((node.property as Node).name as string))
          throw new ExpressionError(`"${String((node.property as Node).name)}" is not allowed`);
        if ((node.object as Node).type === 'Identifier')
          out.members.push({ object: (node.object as Node).name as string, name: (node.property as Node).name as string });
      }
      return;
    case 'CallExpression': {
      const callee = node.callee as Node;
      const args = node.arguments as Node[];
      const literalArgs = args.map((a) => (a.type === 'Literal' ? a.value : undefined));
      if (callee.type === 'MemberExpression' && !callee.computed && (callee.object as Node).type === 'Identifier') {
        const object = (callee.object as Node).name as string;
        const method = (callee.property as Node).name as string;
        const allowed = opts.methods && Object.hasOwn(opts.methods, object) ? opts.methods[object]! : undefined;
        if (!allowed)
          throw new ExpressionError(`only the functions ${[...builtIns(), ...(opts.functions ?? [])].join(', ')} may be called`);
        if (!allowed.includes(method))
          throw new ExpressionError(`${object}.${method} is not one of ${allowed.map((m) => `${object}.${m}`).join(', ')}`);
        out.names.add(object);
        out.calls.push({ object, method, args: literalArgs });
      } else if (callee.type === 'Identifier') {
        const name = callee.name as string;
        const known = [...builtIns(), ...(opts.functions ?? [])];
        if (!known.includes(name)) throw new ExpressionError(`only the functions ${known.join(', ')} may be called`);
        out.calls.push({ name, args: literalArgs });
      } else throw new ExpressionError(`only the functions ${builtIns().join(', ')} may be called`);
      for (const a of args) rec(a);
      return;
    }
    default:
      throw new ExpressionError(`${node.type} is not supported`);
  }
}

const num = (v: unknown): number =>
  typeof v === 'number' ? v : typeof v === 'boolean' ? Number(v) : v === null || v === undefined ? NaN : Number(v);
const truthy = (v: unknown): boolean => Boolean(v);

function member(object: unknown, key: unknown): unknown {
  if (object === null || object === undefined) return undefined;
  const k = String(key);
  if (FORBIDDEN.has(k)) throw new ExpressionError(`"${k}" is not allowed`);
  if (typeof object !== 'object') return undefined;
  return Object.hasOwn(object, k) ? (object as Record<string, unknown>)[k] : undefined;
}

function evaluate(node: Node, scope: Scope): unknown {
  switch (node.type) {
    case 'Literal':
      return node.value;
    case 'Identifier': {
      const name = node.name as string;
      if (name === 'true') return true;
      if (name === 'false') return false;
      if (name === 'null') return null;
      if (!Object.hasOwn(scope, name)) throw new ExpressionError(`unknown name "${name}"`);
      return scope[name];
    }
    case 'MemberExpression': {
      const object = evaluate(node.object as Node, scope);
      const key = node.computed ? evaluate(node.property as Node, scope) : (node.property as Node).name;
      return member(object, key);
    }
    case 'UnaryExpression': {
      const v = evaluate(node.argument as Node, scope);
      switch (node.operator) {
        case '-':
          return -num(v);
        case '+':
          return num(v);
        default:
          return !truthy(v);
      }
    }
    case 'ConditionalExpression':
      return truthy(evaluate(node.test as Node, scope))
        ? evaluate(node.consequent as Node, scope)
        : evaluate(node.alternate as Node, scope);
    case 'CallExpression': {
      const callee = node.callee as Node;
      const raw = () => (node.arguments as Node[]).map((a) => evaluate(a, scope));
      if (callee.type === 'MemberExpression') {
        const objectName = (callee.object as Node).name as string;
        const object = Object.hasOwn(scope, objectName) ? scope[objectName] : undefined;
        const method = (callee.property as Node).name as string;
        const fn =
          object && typeof object === 'object' && Object.hasOwn(object, method) ? (object as Record<string, unknown>)[method] : undefined;
        if (typeof fn !== 'function') throw new ExpressionError(`${objectName}.${method} is not available here`);
        return (fn as (...xs: unknown[]) => unknown)(...raw());
      }
      const name = callee.name as string;
      if (Object.hasOwn(FUNCTIONS, name)) return FUNCTIONS[name]!(...raw().map(num));
      if (Object.hasOwn(PURE, name)) return PURE[name]!(...raw());
      const fn = Object.hasOwn(scope, name) ? scope[name] : undefined;
      if (typeof fn !== 'function') throw new ExpressionError(`${name}() is not available here`);
      return (fn as (...xs: unknown[]) => unknown)(...raw());
    }
    case 'BinaryExpression': {
      const op = node.operator as string;
      if (op === '&&' || op === 'and') return truthy(evaluate(node.left as Node, scope)) && truthy(evaluate(node.right as Node, scope));
      if (op === '||' || op === 'or') return truthy(evaluate(node.left as Node, scope)) || truthy(evaluate(node.right as Node, scope));
      const a = evaluate(node.left as Node, scope);
      const b = evaluate(node.right as Node, scope);
      switch (op) {
        case '+':
          return typeof a === 'string' || typeof b === 'string' ? `${String(a)}${String(b)}` : num(a) + num(b);
        case '-':
          return num(a) - num(b);
        case '*':
          return num(a) * num(b);
        case '/':
          return num(a) / num(b);
        case '%':
          return num(a) % num(b);
        case '==':
        case '===':
          return a === b;
        case '!=':
        case '!==':
          return a !== b;
        default:
          return compare(op, a, b);
      }
    }
    default:
      throw new ExpressionError(`${node.type} is not supported`);
  }
}

function compare(op: string, a: unknown, b: unknown): boolean {
  const [x, y] = typeof a === 'string' && typeof b === 'string' ? [a, b] : [num(a), num(b)];
  switch (op) {
    case '<':
      return x < y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    default:
      return x >= y;
  }
}

/** The names an expression reads and the calls it makes (literal arguments as written, others undefined). */
export interface NameUse {
  names: Set<string>;
  /** `inputs.theta`: a name read of a top-level name. */
  members: Array<{ object: string; name: string }>;
  calls: Array<{ name?: string; object?: string; method?: string; args: unknown[] }>;
}

export interface CompiledExpression {
  readonly source: string;
  /** The names it reads at the top of the scope (not member names: `action` of `action.name`), and its calls. */
  readonly uses: NameUse;
  /** The value for one scope (attributes and, for priorities, `action`). */
  evaluate(scope: Scope): unknown;
  /** The value as a number (true 1, false 0); NaN when it is not a number. */
  number(scope: Scope): number;
}

/** The expression as a message shows it: whole when short, else its start and its length. */
const shownSource = (source: string) =>
  source.length <= 200 ? `"${source}"` : `"${source.slice(0, 60)}..." (${source.length} characters)`;

/** The deepest bracket nesting outside string literals (before parsing, which recurses on it). */
function bracketDepth(source: string): number {
  let depth = 0;
  let max = 0;
  let quote: string | undefined;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(' || c === '[') max = Math.max(max, ++depth);
    else if (c === ')' || c === ']') depth--;
  }
  return max;
}

/** The depth of a parsed tree, walked without recursion. */
function treeDepth(tree: Node): number {
  let max = 0;
  const stack: Array<[Node, number]> = [[tree, 1]];
  while (stack.length > 0) {
    const [node, d] = stack.pop()!;
    if (d > max) max = d;
    if (max > MAX_EXPRESSION_DEPTH) return max;
    for (const v of Object.values(node)) {
      const children: unknown[] = Array.isArray(v) ? v : [v];
      for (const x of children) if (x !== null && typeof x === 'object' && 'type' in x) stack.push([x as Node, d + 1]);
    }
  }
  return max;
}

/** The parsed and checked tree of an expression; ExpressionError with one line. */
export function parseExpression(source: string, opts: ExpressionOptions = {}, uses?: NameUse): Node {
  if (typeof source !== 'string') throw new ExpressionError('an expression must be a string');
  if (source.length > MAX_EXPRESSION_CHARS)
    throw new ExpressionError(`${shownSource(source)} is longer than ${MAX_EXPRESSION_CHARS} characters, the limit of an expression`);
  if (bracketDepth(source) > MAX_EXPRESSION_DEPTH)
    throw new ExpressionError(`${shownSource(source)} nests brackets more than ${MAX_EXPRESSION_DEPTH} deep, the limit of an expression`);
  let tree: Node;
  try {
    tree = jsep(source);
  } catch (e) {
    if (e instanceof RangeError) throw new ExpressionError(`${shownSource(source)} is too deeply nested to parse`);
    throw new ExpressionError(`cannot parse ${shownSource(source)}: ${(e as Error).message.replace(/\s+/g, ' ').slice(0, 200)}`);
  }
  if (tree.type === 'Compound') throw new ExpressionError(`${shownSource(source)} must be one expression`);
  if (treeDepth(tree) > MAX_EXPRESSION_DEPTH)
    throw new ExpressionError(
      `${shownSource(source)} nests more than ${MAX_EXPRESSION_DEPTH} operations deep, the limit of an expression (group long sums with brackets, or use fewer terms)`,
    );
  check(tree, opts, uses ?? { names: new Set(), members: [], calls: [] });
  return tree;
}

/** Parses and checks an expression; throws ExpressionError with one line. */
export function compileExpression(source: string, opts: ExpressionOptions = {}): CompiledExpression {
  const uses: NameUse = { names: new Set(), members: [], calls: [] };
  const tree = parseExpression(source, opts, uses);
  return {
    source,
    uses,
    evaluate: (scope) => evaluate(tree, scope),
    number: (scope) => num(evaluate(tree, scope)),
  };
}

/** The names an expression reads: `roots` (free names: attributes, `id`, `step`...) and `members` (`action.name`: object and key). */
export interface ExpressionNames {
  roots: string[];
  members: Array<{ object: string; key: string }>;
}

/** The names a checked expression reads (for `sop validate`'s check against what it can see). */
export function expressionNames(source: string, opts: ExpressionOptions = {}): ExpressionNames {
  const tree = parseExpression(source, opts);
  const roots = new Set<string>();
  const members: Array<{ object: string; key: string }> = [];
  const stack: Node[] = [tree];
  while (stack.length > 0) {
    const node = stack.pop()!;
    switch (node.type) {
      case 'Identifier': {
        const name = node.name as string;
        if (name !== 'true' && name !== 'false' && name !== 'null') roots.add(name);
        break;
      }
      case 'MemberExpression': {
        const object = node.object as Node;
        const property = node.property as Node;
        const key = node.computed ? (property.type === 'Literal' ? String(property.value) : undefined) : (property.name as string);
        if (object.type === 'Identifier' && key !== undefined) members.push({ object: object.name as string, key });
        stack.push(object);
        if (node.computed) stack.push(property);
        break;
      }
      case 'CallExpression':
        stack.push(...(node.arguments as Node[]));
        break;
      default:
        for (const v of Object.values(node)) {
          const children: unknown[] = Array.isArray(v) ? v : [v];
          for (const x of children) if (x !== null && typeof x === 'object' && 'type' in x) stack.push(x as Node);
        }
    }
  }
  return { roots: [...roots], members };
}
