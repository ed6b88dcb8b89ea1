// Which names of its context a template reads, found without rendering it: a render is a pure
// function of those values (the helpers are pure), so a caller may keep a render's text for as
// long as they do not change. Conservative: a template that uses anything whose reach is not
// plain (partials, decorators, `@data`, `../`, `this`, blocks that change the context such as
// `each` and `with`, block params) gives undefined, "could read anything".
import { lazyRequire } from '../../shared/util/lazy-require.js';

const handlebars = lazyRequire<typeof import('handlebars')>('handlebars'); // loaded at the first template read

interface Node {
  type: string;
}
interface Path extends Node {
  data: boolean;
  depth: number;
  parts: string[];
  original: string;
}
interface Call extends Node {
  path: Node;
  params: Node[];
  hash?: { pairs: Array<{ value: Node }> };
  program?: Program;
  inverse?: Program;
}
interface Program extends Node {
  body: Node[];
  blockParams?: string[];
}

/** Blocks that keep the context (their bodies read the same names). */
const SAME_CONTEXT = new Set(['if', 'unless']);
const LITERALS = new Set(['StringLiteral', 'NumberLiteral', 'BooleanLiteral', 'UndefinedLiteral', 'NullLiteral']);

/** The top-level names `source` reads, given the names of its helpers; undefined: not known. */
export function contextReads(source: string, helpers: ReadonlySet<string>): ReadonlySet<string> | undefined {
  const reads = new Set<string>();
  const value = (n: Node): boolean => {
    if (LITERALS.has(n.type)) return true;
    if (n.type === 'SubExpression') return call(n as Call);
    if (n.type !== 'PathExpression') return false;
    const p = n as Path;
    if (p.data || p.depth > 0 || p.parts.length === 0 || /^\.|^this\b/.test(p.original)) return false;
    reads.add(p.parts[0]!);
    return true;
  };
  // a helper's name is not a read; a bare name that is no helper is ({{name}}, a helper-less block)
  const call = (c: Call): boolean => {
    const path = c.path as Path;
    const named = c.path.type === 'PathExpression' && !path.data && path.depth === 0 && path.parts.length === 1;
    const helper = named && helpers.has(path.parts[0]!) && !/^\.|^this\b/.test(path.original);
    if (!helper && !value(c.path)) return false;
    return c.params.every(value) && (c.hash?.pairs ?? []).every((p) => value(p.value));
  };
  const program = (p: Program | undefined): boolean => p === undefined || ((p.blockParams?.length ?? 0) === 0 && p.body.every(statement));
  const statement = (n: Node): boolean => {
    switch (n.type) {
      case 'ContentStatement':
      case 'CommentStatement':
        return true;
      case 'MustacheStatement':
        return call(n as Call);
      case 'BlockStatement': {
        const b = n as Call;
        const name = (b.path as Path).original;
        return (
          b.path.type === 'PathExpression' &&
          SAME_CONTEXT.has(name) &&
          helpers.has(name) &&
          call(b) &&
          program(b.program) &&
          program(b.inverse)
        );
      }
      default:
        return false; // partials, decorators
    }
  };
  let ast: Program;
  try {
    ast = handlebars().parse(source);
  } catch {
    return undefined;
  }
  return program(ast) ? reads : undefined;
}
