// Typed values the plugins of a run share through its context, instead of reaching into each
// other's internals: the module that owns a value declares its key (`contextVar<T>(name)`), one
// plugin sets it, others read it.
export interface ContextVar<T> {
  readonly name: string;
  /** Only for the type: never set. */
  readonly _type?: T;
}

export function contextVar<T>(name: string): ContextVar<T> {
  return { name };
}

export class ContextVars {
  private readonly values = new Map<ContextVar<unknown>, unknown>();

  set<T>(key: ContextVar<T>, value: T): void {
    this.values.set(key, value);
  }

  get<T>(key: ContextVar<T>): T | undefined {
    return this.values.get(key) as T | undefined;
  }
}
