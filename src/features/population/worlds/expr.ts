// A small safe expression language for priorities (and any rule over an agent's attributes):
// parsed by jsep, evaluated here by walking the tree. No eval, no Function, no prototype access.
//   numbers, strings, true/false/null; + - * / %; < <= > >= == != (=== and !== alike);
//   && || ! and the words and / or / not; a ? b : c; attribute access (`action.args.price`,
//   `tags[0]`); the functions min, max, abs, floor, ceil, round, sqrt, log, exp.
// Unknown names are an error at evaluation ("unknown name x"), so a typo does not read as 0.
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
};
const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);
const BINARY = new Set(['+', '-', '*', '/', '%', '<', '<=', '>', '>=', '==', '!=', '===', '!==', '&&', '||', 'and', 'or']);
const UNARY = new Set(['-', '+', '!', 'not']);

/** Checks the tree once, so a bad expression fails when it is compiled, not at the first agent. */
function check(node: Node): void {
  switch (node.type) {
    case 'Literal':
    case 'Identifier':
    case 'ThisExpression':
      if (node.type === 'ThisExpression') throw new ExpressionError('"this" is not allowed');
      if (node.type === 'Identifier' && FORBIDDEN.has(node.name as string))
        throw new ExpressionError(`"${String(node.name)}" is not allowed`);
      return;
    case 'BinaryExpression':
      if (!BINARY.has(node.operator as string)) throw new ExpressionError(`operator "${String(node.operator)}" is not supported`);
      check(node.left as Node);
      check(node.right as Node);
      return;
    case 'UnaryExpression':
      if (!UNARY.has(node.operator as string)) throw new ExpressionError(`operator "${String(node.operator)}" is not supported`);
      check(node.argument as Node);
      return;
    case 'ConditionalExpression':
      check(node.test as Node);
      check(node.consequent as Node);
      check(node.alternate as Node);
      return;
    case 'MemberExpression':
      check(node.object as Node);
      if (node.computed) check(node.property as Node);
      else if (FORBIDDEN.has((node.property as Node).name as string))
        throw new ExpressionError(`"${String((node.property as Node).name)}" is not allowed`);
      return;
    case 'CallExpression': {
      const callee = node.callee as Node;
      if (callee.type !== 'Identifier' || !Object.hasOwn(FUNCTIONS, callee.name as string))
        throw new ExpressionError(`only the functions ${Object.keys(FUNCTIONS).join(', ')} may be called`);
      for (const a of node.arguments as Node[]) check(a);
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
      const args = (node.arguments as Node[]).map((a) => num(evaluate(a, scope)));
      return FUNCTIONS[(node.callee as Node).name as string]!(...args);
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

export interface CompiledExpression {
  readonly source: string;
  /** The value for one scope (attributes and, for priorities, `action`). */
  evaluate(scope: Scope): unknown;
  /** The value as a number (true 1, false 0); NaN when it is not a number. */
  number(scope: Scope): number;
}

/** Parses and checks an expression; throws ExpressionError with one line. */
export function compileExpression(source: string): CompiledExpression {
  let tree: Node;
  try {
    tree = jsep(source);
  } catch (e) {
    throw new ExpressionError(`cannot parse "${source}": ${(e as Error).message.replace(/\s+/g, ' ')}`);
  }
  if (tree.type === 'Compound') throw new ExpressionError(`"${source}" must be one expression`);
  check(tree);
  return {
    source,
    evaluate: (scope) => evaluate(tree, scope),
    number: (scope) => num(evaluate(tree, scope)),
  };
}
