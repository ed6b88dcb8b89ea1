// A small knowledge graph: subject-predicate-object triples, each owned by the statement that
// asserted it, queryable by entity.
import type { Triple } from './statement.js';

export interface GraphTriple extends Triple {
  statement: number;
}

/** Entities match case-insensitively, ignoring surrounding and repeated spaces. */
export function entityKey(name: string): string {
  return name.trim().replace(/\s+/g, ' ').toLowerCase();
}

export class KnowledgeGraph {
  private readonly triples: GraphTriple[] = [];

  get size(): number {
    return this.triples.length;
  }
  all(): readonly GraphTriple[] {
    return this.triples;
  }

  add(statement: number, triples: readonly Triple[]): void {
    for (const t of triples) this.triples.push({ subject: t.subject, predicate: t.predicate, object: t.object, statement });
  }

  /** Removes every triple of the statement; returns how many. */
  removeStatement(statement: number): number {
    let removed = 0;
    for (let i = this.triples.length - 1; i >= 0; i--) {
      if (this.triples[i]!.statement === statement) {
        this.triples.splice(i, 1);
        removed++;
      }
    }
    return removed;
  }

  /** Triples where the entity is the subject or the object. */
  about(entity: string): GraphTriple[] {
    const key = entityKey(entity);
    return this.triples.filter((t) => entityKey(t.subject) === key || entityKey(t.object) === key);
  }

  /** Entities one triple away from the entity, with the linking predicate and direction. */
  neighbours(entity: string): Array<{ entity: string; predicate: string; direction: 'out' | 'in' }> {
    const key = entityKey(entity);
    const out: Array<{ entity: string; predicate: string; direction: 'out' | 'in' }> = [];
    for (const t of this.triples) {
      if (entityKey(t.subject) === key) out.push({ entity: t.object, predicate: t.predicate, direction: 'out' });
      else if (entityKey(t.object) === key) out.push({ entity: t.subject, predicate: t.predicate, direction: 'in' });
    }
    return out;
  }

  entities(): string[] {
    const seen = new Map<string, string>();
    for (const t of this.triples) {
      for (const e of [t.subject, t.object]) if (!seen.has(entityKey(e))) seen.set(entityKey(e), e);
    }
    return [...seen.values()];
  }
}
